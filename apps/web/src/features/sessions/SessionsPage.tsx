import {
  Anchor,
  Badge,
  Button,
  Drawer,
  Group,
  Pagination,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  ThemeIcon,
} from '@mantine/core';
import { IconMessage, IconUser } from '@tabler/icons-react';
import { useParams } from 'react-router';
import { ProjectHeader } from '../../components/ProjectHeader';
import { SearchBox } from '../../components/ui/SearchBox';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { formatCost, formatCount, formatLatency, formatScore } from '../../lib/format';
import { isTimeRange, TIME_RANGE_LABELS } from '../../lib/trace-view';
import { oneOf } from '../../lib/url-codec';
import { useTraceGroups } from './api';
import { Conversation } from './Conversation';
import { GROUPINGS, sessionsCodec } from './url-state';

const PAGE_SIZE = 50;

export default function SessionsPage() {
  const { projectUuid = '' } = useParams();
  const [{ by, search, range, page, key }, set] = useUrlState(sessionsCodec);
  const groups = useTraceGroups({
    project_uuid: projectUuid,
    by,
    page,
    page_size: PAGE_SIZE,
    // Left out when unset, so that the request reads as the view does.
    ...(search.trim() && { search: search.trim() }),
    ...(range !== 'na' && { time_range: range }),
  });
  const noun = by === 'session' ? 'session' : 'user';
  const narrowed = !!search.trim() || range !== 'na';
  const reset = () => set({ search: '', range: 'na', page: 1 });
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
      <Group gap="xs" wrap="wrap">
        <SearchBox
          label={by === 'session' ? 'Search session ids' : 'Search users'}
          width={260}
          value={search}
          onSearch={(s) => set({ search: s, page: 1 })}
        />
        <Select
          aria-label="Time range"
          w={160}
          data={Object.entries(TIME_RANGE_LABELS).map(([value, label]) => ({ value, label }))}
          value={range}
          allowDeselect={false}
          onChange={(r) => r && isTimeRange(r) && set({ range: r, page: 1 })}
        />
        {narrowed && (
          <Button variant="subtle" color="gray" onClick={reset}>
            Reset
          </Button>
        )}
      </Group>
      <Paper withBorder radius="md">
        {groups.isPending ? (
          <LoadingState label={`Loading the ${noun}s`} />
        ) : groups.isError ? (
          <Stack p="md">
            <ErrorState error={groups.error} onRetry={() => groups.refetch()} />
          </Stack>
        ) : groups.data.results.length === 0 && narrowed ? (
          <EmptyState title={`No ${noun} matches`}>
            <Text size="sm" c="dimmed">
              Widen the time range or change the search (
              {by === 'session' ? 'part of a session id' : 'part of a user identifier'}).
            </Text>
            <Button variant="light" onClick={reset}>
              Reset
            </Button>
          </EmptyState>
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
        {key && (
          <Conversation
            projectUuid={projectUuid}
            by={by}
            groupKey={key}
            range={range}
            onOpenSession={(sessionId) => set({ by: 'session', key: sessionId, search: '', page: 1 })}
          />
        )}
      </Drawer>
    </Stack>
  );
}
