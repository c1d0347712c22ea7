import {
  Anchor,
  Badge,
  Drawer,
  Group,
  Pagination,
  Paper,
  SegmentedControl,
  Stack,
  Table,
  Text,
  ThemeIcon,
} from '@mantine/core';
import { IconMessage, IconUser } from '@tabler/icons-react';
import { Link, useParams } from 'react-router';
import type { TraceGroup } from '../../api/types';
import { ProjectHeader } from '../../components/ProjectHeader';
import { Payload } from '../../components/ui/Payload';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCost, formatCount, formatLatency, formatScore } from '../../lib/format';
import { oneOf } from '../../lib/url-codec';
import { useTraceGroup, useTraceGroups } from './api';
import { GROUPINGS, sessionsCodec, type SessionsView } from './url-state';

type By = SessionsView['by'];
const PAGE_SIZE = 50;

export default function SessionsPage() {
  const { projectUuid = '' } = useParams();
  const [{ by, page, key }, set] = useUrlState(sessionsCodec);
  const groups = useTraceGroups({ project_uuid: projectUuid, by, page, page_size: PAGE_SIZE });
  const noun = by === 'session' ? 'session' : 'user';
  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="sessions"
        title="Sessions & users"
        right={
          <SegmentedControl
            aria-label="Group traces by"
            value={by}
            onChange={(v) => set({ by: oneOf(GROUPINGS, v, by), page: 1, key: null })}
            data={[
              { value: 'session', label: 'By session' },
              { value: 'user', label: 'By user' },
            ]}
          />
        }
      />
      <Paper withBorder radius="md">
        {groups.isPending ? (
          <LoadingState label={`Loading the ${noun}s`} />
        ) : groups.isError ? (
          <Stack p="md">
            <ErrorState error={groups.error} onRetry={() => groups.refetch()} />
          </Stack>
        ) : groups.data.results.length === 0 ? (
          <EmptyState title={`No ${noun}s yet`}>
            <Text size="sm" c="dimmed">
              {by === 'session'
                ? 'Traces with a session_id are grouped here: set it on the root span of each turn.'
                : 'Traces with an end_user_identifier are grouped here: set it on the root span.'}
            </Text>
          </EmptyState>
        ) : (
          <Table
            highlightOnHover
            verticalSpacing="sm"
            horizontalSpacing="md"
            aria-label={by === 'session' ? 'Sessions' : 'Users'}
          >
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{by === 'session' ? 'Session' : 'User'}</Table.Th>
                <Table.Th ta="right">Traces</Table.Th>
                <Table.Th>First</Table.Th>
                <Table.Th>Last</Table.Th>
                <Table.Th ta="right">Errors</Table.Th>
                <Table.Th ta="right">Avg latency</Table.Th>
                <Table.Th ta="right">Cost</Table.Th>
                <Table.Th ta="right">Feedback</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {groups.data.results.map((g) => (
                <Table.Tr
                  key={g.key}
                  style={{ cursor: 'pointer' }}
                  onClick={() => set({ key: g.key })}
                  aria-selected={g.key === key}
                >
                  <Table.Td maw={360}>
                    <Anchor
                      component="button"
                      type="button"
                      ff="monospace"
                      size="sm"
                      onClick={(e) => {
                        e.stopPropagation();
                        set({ key: g.key });
                      }}
                      style={{ wordBreak: 'break-all', textAlign: 'left' }}
                    >
                      {g.key}
                    </Anchor>
                  </Table.Td>
                  <Table.Td ta="right">{formatCount(g.traces)}</Table.Td>
                  <Table.Td>
                    <Timestamp value={g.first_start} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={g.last_start} size="sm" />
                  </Table.Td>
                  <Table.Td ta="right">
                    {g.errors ? (
                      <Badge color="red" variant="light">
                        {formatCount(g.errors)}
                      </Badge>
                    ) : (
                      '0'
                    )}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatLatency(g.latency_avg)}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatCost(g.cost)}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatScore(g.feedback_mean)}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Paper>
      {groups.data && groups.data.total > PAGE_SIZE && (
        <Group justify="space-between">
          <Text size="sm" c="dimmed">
            {formatCount(groups.data.total)} {noun}s
          </Text>
          <Pagination
            size="sm"
            total={Math.ceil(groups.data.total / PAGE_SIZE)}
            value={page}
            onChange={(p) => set({ page: p })}
          />
        </Group>
      )}
      <Drawer
        opened={!!key}
        onClose={() => set({ key: null })}
        position="right"
        size="xl"
        title={
          <Group gap="xs">
            <ThemeIcon variant="light" size="sm">
              {by === 'session' ? <IconMessage size={14} /> : <IconUser size={14} />}
            </ThemeIcon>
            <Text fw={600}>{by === 'session' ? 'Session' : 'User'}</Text>
            <Text ff="monospace" size="sm" c="dimmed" style={{ wordBreak: 'break-all' }}>
              {key}
            </Text>
          </Group>
        }
      >
        {key && <Conversation projectUuid={projectUuid} by={by} groupKey={key} />}
      </Drawer>
    </Stack>
  );
}

function Conversation({ projectUuid, by, groupKey }: { projectUuid: string; by: By; groupKey: string }) {
  const group = useTraceGroup({ project_uuid: projectUuid, by, key: groupKey });
  if (group.isPending) return <LoadingState label="Loading the conversation" />;
  if (group.isError) return <ErrorState error={group.error} onRetry={() => group.refetch()} />;
  if (!group.data.traces.length) return <EmptyState title="No traces in this group" />;
  return (
    <Stack gap="lg" aria-label="Conversation">
      {group.data.traces.map((t, i) => (
        <Turn key={t.trace_id} n={i + 1} trace={t} projectUuid={projectUuid} />
      ))}
    </Stack>
  );
}

/** A chat message's text when the payload is one (a string, or {content|text|input|query|question}). */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    for (const k of ['content', 'text', 'message', 'input', 'query', 'question', 'output', 'answer']) {
      if (typeof o[k] === 'string' && Object.keys(o).length <= 2) return o[k] as string;
    }
  }
  return null;
}

function Turn({ n, trace, projectUuid }: { n: number; trace: TraceGroup['traces'][number]; projectUuid: string }) {
  return (
    <Stack gap={6} data-testid="turn">
      <Group gap="xs" justify="space-between">
        <Group gap="xs">
          <Badge variant="outline" color="gray" size="sm">
            #{n}
          </Badge>
          <Timestamp value={trace.start_timestamp} size="xs" c="dimmed" />
        </Group>
        <Anchor component={Link} to={`/projects/${projectUuid}/traces/${trace.trace_id}`} size="xs">
          Open the trace
        </Anchor>
      </Group>
      <Bubble role="Input" color="blue" value={trace.inputs} />
      <Bubble role="Output" color="violet" value={trace.output} align="end" />
    </Stack>
  );
}

function Bubble({
  role,
  color,
  value,
  align = 'start',
}: {
  role: string;
  color: string;
  value: unknown;
  align?: 'start' | 'end';
}) {
  const text = textOf(value);
  return (
    <Paper
      withBorder
      radius="md"
      p="sm"
      maw="85%"
      style={{
        alignSelf: align === 'end' ? 'flex-end' : 'flex-start',
        background: `var(--mantine-color-${color}-light)`,
      }}
    >
      {/* The light variant's own text colour: it reads on the tint in both schemes. */}
      <Text size="xs" fw={600} c={`var(--mantine-color-${color}-light-color)`} mb={4}>
        {role}
      </Text>
      {text != null ? (
        <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
          {text}
        </Text>
      ) : (
        <Payload value={value} label={`the ${role.toLowerCase()}`} maxHeight={240} />
      )}
    </Paper>
  );
}
