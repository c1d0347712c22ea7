import { Anchor, Badge, Button, Group, Paper, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { TimeRange, TraceGroup } from '../../api/types';
import { Payload } from '../../components/ui/Payload';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { formatCount } from '../../lib/format';
import { useTraceGroup } from './api';
import { sessionsOf } from './conversation';
import type { SessionsView } from './url-state';

type Trace = TraceGroup['traces'][number];

/**
 * One group's traces as a conversation: a session's turns in order; a user's separated by session, each
 * under a header that opens it. Only the traces of the time range are shown, as the list counted them.
 */
export function Conversation({
  projectUuid,
  by,
  groupKey,
  range,
  onOpenSession,
}: {
  projectUuid: string;
  by: SessionsView['by'];
  groupKey: string;
  range: TimeRange;
  onOpenSession: (sessionId: string) => void;
}) {
  const group = useTraceGroup({
    project_uuid: projectUuid,
    by,
    key: groupKey,
    ...(range !== 'na' && { time_range: range }),
  });
  if (group.isPending) return <LoadingState label="Loading the conversation" />;
  if (group.isError) return <ErrorState error={group.error} onRetry={() => group.refetch()} />;
  if (!group.data.traces.length)
    return (
      <EmptyState title="No traces in this group">
        {range !== 'na' && (
          <Text size="sm" c="dimmed">
            None in the time range: widen it to see older ones.
          </Text>
        )}
      </EmptyState>
    );
  if (by === 'session')
    return (
      <Stack gap="lg" aria-label="Conversation">
        {group.data.traces.map((t, i) => (
          <Turn key={t.trace_id} n={i + 1} trace={t} projectUuid={projectUuid} />
        ))}
      </Stack>
    );
  return (
    <Stack gap="lg" aria-label="Sessions of this user">
      {sessionsOf(group.data.traces).map(({ sessionId, traces }) => {
        const title = sessionId === null ? 'Without a session' : `Session ${sessionId}`;
        return (
          <Paper key={sessionId ?? ''} component="section" aria-label={title} withBorder radius="md" p="sm">
            <Stack gap="md">
              <Group justify="space-between" gap="xs" wrap="nowrap">
                <Stack gap={0} miw={0}>
                  <Text
                    fw={600}
                    size="sm"
                    ff={sessionId === null ? undefined : 'monospace'}
                    style={{ wordBreak: 'break-all' }}
                  >
                    {title}
                  </Text>
                  <Group gap={6}>
                    <Text size="xs" c="dimmed">
                      {formatCount(traces.length)} {traces.length === 1 ? 'turn' : 'turns'}, from
                    </Text>
                    <Timestamp value={traces[0]!.start_timestamp} size="xs" c="dimmed" />
                  </Group>
                </Stack>
                {sessionId !== null && (
                  <Button variant="subtle" size="xs" onClick={() => onOpenSession(sessionId)}>
                    Open the session
                  </Button>
                )}
              </Group>
              {traces.map((t, i) => (
                <Turn key={t.trace_id} n={i + 1} trace={t} projectUuid={projectUuid} />
              ))}
            </Stack>
          </Paper>
        );
      })}
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

/** One trace of the conversation: what was asked, and what came back, or how it failed. */
function Turn({ n, trace, projectUuid }: { n: number; trace: Trace; projectUuid: string }) {
  const failed = trace.status === 'error';
  return (
    <Stack gap={6} data-testid="turn">
      <Group gap="xs" justify="space-between">
        <Group gap="xs">
          <Badge variant="outline" color="gray" size="sm">
            #{n}
          </Badge>
          <Timestamp value={trace.start_timestamp} size="xs" c="dimmed" />
          {failed && (
            <Badge color="red" variant="light" size="sm">
              Failed
            </Badge>
          )}
        </Group>
        <Anchor component={Link} to={`/projects/${projectUuid}/traces/${trace.trace_id}`} size="xs">
          Open the trace
        </Anchor>
      </Group>
      <Bubble role="Input" color="blue" value={trace.inputs} />
      {/* A failed turn shows its error; its output too, when it has one. */}
      {(!failed || trace.output != null) && <Bubble role="Output" color="violet" value={trace.output} align="end" />}
      {failed && (
        <Bubble role="Error" color="red" value={trace.error || 'It failed without an error message.'} align="end" />
      )}
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
