import {
  Alert,
  Button,
  Code,
  CopyButton,
  Group,
  Paper,
  ScrollArea,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Tabs,
  Text,
} from '@mantine/core';
import { IconAlertTriangle, IconBraces, IconCheck, IconLink } from '@tabler/icons-react';
import { useClipboard } from '@mantine/hooks';
import { useMemo, useState, type ReactNode } from 'react';
import type { SkeletonSpan, Span } from '../../../api/types';
import { Chips, Estimated } from '../../../components/TraceCells';
import { ChatView } from '../../../components/trace/ChatView';
import { Section } from '../../../components/trace/Section';
import { SpanHeading } from '../../../components/trace/SpanHeading';
import { SpanRemarks } from '../../../components/trace/SpanRemarks';
import { Payload } from '../../../components/ui/Payload';
import { ErrorState, LoadingState } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { chatOf } from '../../../lib/chat';
import { formatCost, formatCount, formatLatency, formatScore } from '../../../lib/format';
import { EvalVersions } from './EvalVersions';

type Props = {
  skeleton: SkeletonSpan;
  span: Span | undefined;
  loading: boolean;
  error: unknown;
  onRetry: () => void;
  link: string;
};

function Stat({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Paper withBorder radius="sm" px="sm" py={6}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} style={{ letterSpacing: 0.3 }}>
        {label}
      </Text>
      <Text size="sm" ff="monospace" fw={500} truncate>
        {children}
      </Text>
    </Paper>
  );
}

/** One span: its timings first (from the skeleton, at once), then its payload when fetched. */
export function SpanDetail({ skeleton, span, loading, error, onRetry, link }: Props) {
  const clipboard = useClipboard({ timeout: 1500 });
  return (
    <Stack gap="sm" p="md">
      <Group justify="space-between" align="flex-start" wrap="nowrap">
        <div style={{ minWidth: 0 }}>
          <SpanHeading skeleton={skeleton} order={3} />
          <Text size="xs" c="dimmed" ff="monospace">
            {skeleton.trace_id}
          </Text>
        </div>
        <Group gap={6} wrap="nowrap">
          <CopyButton value={link}>
            {({ copied, copy }) => (
              <Button
                size="xs"
                variant="default"
                onClick={copy}
                leftSection={copied ? <IconCheck size={14} /> : <IconLink size={14} />}
              >
                {copied ? 'Copied' : 'Copy link'}
              </Button>
            )}
          </CopyButton>
          {/* Serialized on click only: a span can hold megabytes. */}
          <Button
            size="xs"
            variant="default"
            disabled={!span}
            onClick={() => clipboard.copy(JSON.stringify(span, null, 2))}
            leftSection={clipboard.copied ? <IconCheck size={14} /> : <IconBraces size={14} />}
          >
            {clipboard.copied ? 'Copied' : 'Copy as JSON'}
          </Button>
        </Group>
      </Group>

      <SimpleGrid cols={{ base: 2, xl: 4 }} spacing="xs">
        <Stat label="Latency">{formatLatency(skeleton.latency)}</Stat>
        <Stat label="First token">{formatLatency(span?.time_to_first_token)}</Stat>
        <Stat label="Tokens in / out">
          <Estimated estimated={skeleton.usage_estimated}>
            {formatCount(skeleton.input_tokens)} / {formatCount(skeleton.output_tokens)}
          </Estimated>
        </Stat>
        <Stat label="Cost">
          <Estimated estimated={skeleton.usage_estimated}>{formatCost(skeleton.cost)}</Estimated>
        </Stat>
      </SimpleGrid>
      <Group gap="lg">
        <Text size="sm">
          <Text span c="dimmed">
            Start{' '}
          </Text>
          <Timestamp value={skeleton.start_timestamp} size="sm" />
        </Text>
        <Text size="sm">
          <Text span c="dimmed">
            End{' '}
          </Text>
          <Timestamp value={skeleton.end_timestamp} size="sm" />
        </Text>
        <Text size="sm">
          <Text span c="dimmed">
            Total tokens{' '}
          </Text>
          <Estimated estimated={skeleton.usage_estimated}>{formatCount(skeleton.total_tokens)}</Estimated>
        </Text>
      </Group>

      {loading ? (
        <LoadingState label="Loading the span" />
      ) : error ? (
        <ErrorState error={error} title="Could not load this span" onRetry={onRetry} />
      ) : (
        span && <SpanBody span={span} />
      )}
    </Stack>
  );
}

function SpanBody({ span }: { span: Span }) {
  const messages = useMemo(() => chatOf(span), [span]);
  const config = span.configuration ?? {};
  const { messages: _m, history: _h, model_params: params, ...configRest } = config as Record<string, unknown>;
  const scores = span.scores ?? [];
  const remarkCount =
    (span.comments?.length ?? 0) +
    Object.values(span.annotations ?? {}).reduce((n, byUser) => n + Object.keys(byUser).length, 0);
  const [tab, setTab] = useState<string | null>(messages.length ? 'messages' : 'io');
  return (
    <Stack gap="sm">
      {(span.status === 'error' || span.error) && (
        <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} />} title="Error">
          {span.error ? (
            <ScrollArea.Autosize mah={260}>
              <Code block fz="xs" bg="transparent" style={{ whiteSpace: 'pre', padding: 0 }}>
                {span.error}
              </Code>
            </ScrollArea.Autosize>
          ) : (
            <Text size="sm">The span ended with status error, without a message.</Text>
          )}
        </Alert>
      )}
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List>
          {messages.length > 0 && <Tabs.Tab value="messages">Messages ({messages.length})</Tabs.Tab>}
          <Tabs.Tab value="io">Input &amp; output</Tabs.Tab>
          <Tabs.Tab value="model">Model &amp; metadata</Tabs.Tab>
          <Tabs.Tab value="scores">Scores &amp; feedback{scores.length ? ` (${scores.length})` : ''}</Tabs.Tab>
          <Tabs.Tab value="remarks">Comments &amp; annotations{remarkCount ? ` (${remarkCount})` : ''}</Tabs.Tab>
        </Tabs.List>
        {messages.length > 0 && (
          <Tabs.Panel value="messages" pt="sm">
            <Messages span={span} messages={messages} />
          </Tabs.Panel>
        )}
        <Tabs.Panel value="io" pt="sm">
          <Stack gap="sm">
            <Section title="Inputs">
              <Payload value={span.inputs} label="the inputs" />
            </Section>
            <Section title="Output">
              <Payload value={span.output} label="the output" />
            </Section>
            {span.target != null && (
              <Section title="Target">
                <Payload value={span.target} label="the target" />
              </Section>
            )}
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="model" pt="sm">
          <Stack gap="sm">
            <KeyValues
              rows={[
                ['Model', config.model],
                ['Provider', config.provider],
                ['Deployment', span.deployment_id],
                ['Cache hit', span.cache_hit],
                ['User', span.end_user_identifier],
                ['Session', span.session_id],
                ['Parent span', span.parent_trace_id],
                ['Root span', span.root_trace_id],
              ]}
            />
            {params != null && (
              <Section title="Model parameters">
                <KeyValues rows={Object.entries(params as Record<string, unknown>)} />
              </Section>
            )}
            {Object.keys(configRest).length > 0 && (
              <Section title="Configuration">
                <Payload value={configRest} label="the configuration" />
              </Section>
            )}
            <Section title="Metadata">
              <Payload value={span.metadata} label="the metadata" />
            </Section>
            <Section title="Tags">
              <Chips items={span.tags ?? []} max={50} />
            </Section>
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="scores" pt="sm">
          <Stack gap="sm">
            {scores.length ? (
              <Table withTableBorder verticalSpacing={6} aria-label="Scores">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Score</Table.Th>
                    <Table.Th ta="right">Value</Table.Th>
                    <Table.Th>Reason</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {scores.map((s, i) => (
                    <Table.Tr key={`${s.name}-${i}`}>
                      <Table.Td fw={500}>{s.name}</Table.Td>
                      <Table.Td ta="right" ff="monospace">
                        {formatScore(s.score)}
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
                          {s.reason ?? '–'}
                        </Text>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            ) : (
              <Text size="sm" c="dimmed">
                No scores on this span. Evaluations and clients add them.
              </Text>
            )}
            <EvalVersions traceId={span.trace_id} />
            <KeyValues
              rows={[['Feedback score', span.feedback_score == null ? null : formatScore(span.feedback_score)]]}
            />
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="remarks" pt="sm">
          <SpanRemarks span={span} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function Messages({ span, messages }: { span: Span; messages: ReturnType<typeof chatOf> }) {
  const [mode, setMode] = useState('chat');
  const raw = useMemo(
    () => ({
      messages: span.configuration?.messages,
      ...(span.configuration?.history != null && { history: span.configuration.history }),
      output: span.output,
    }),
    [span],
  );
  return (
    <Stack gap="sm">
      <SegmentedControl
        size="xs"
        w={180}
        value={mode}
        onChange={setMode}
        data={[
          { value: 'chat', label: 'Chat' },
          { value: 'json', label: 'Raw JSON' },
        ]}
        aria-label="Show the messages as"
      />
      {mode === 'chat' ? (
        <ChatView messages={messages} />
      ) : (
        <Payload value={raw} label="the messages" maxHeight={600} />
      )}
    </Stack>
  );
}

function KeyValues({ rows }: { rows: [string, unknown][] }) {
  const shown = rows.filter(([, v]) => v != null && v !== '');
  if (!shown.length) return null;
  return (
    <Table verticalSpacing={4} fz="sm" withRowBorders={false}>
      <Table.Tbody>
        {shown.map(([k, v]) => (
          <Table.Tr key={k}>
            <Table.Td w={160} c="dimmed">
              {k}
            </Table.Td>
            <Table.Td
              ff={typeof v === 'string' && v.length > 30 ? 'monospace' : undefined}
              style={{ wordBreak: 'break-all' }}
            >
              {typeof v === 'object' ? JSON.stringify(v) : String(v)}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
