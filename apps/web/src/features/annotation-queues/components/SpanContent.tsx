import { Alert, Code, ScrollArea, Stack, Text } from '@mantine/core';
import { IconAlertTriangle } from '@tabler/icons-react';
import { useMemo } from 'react';
import type { SkeletonSpan, Span } from '../../../api/types';
import { ChatView } from '../../../components/trace/ChatView';
import { Section } from '../../../components/trace/Section';
import { SpanHeading } from '../../../components/trace/SpanHeading';
import { Payload } from '../../../components/ui/Payload';
import { ErrorState, LoadingState } from '../../../components/ui/StateViews';
import { chatOf } from '../../../lib/chat';

/**
 * What a reviewer reads of the selected span: its conversation as on the trace page when it has one, else
 * its inputs and output; its error and target when it has them.
 */
export function SpanContent({
  skeleton,
  span,
  loading,
  error,
  onRetry,
}: {
  skeleton: SkeletonSpan;
  span: Span | undefined;
  loading: boolean;
  error: unknown;
  onRetry: () => void;
}) {
  const messages = useMemo(() => (span ? chatOf(span) : []), [span]);
  return (
    <Stack gap="sm" p="md">
      <div>
        <SpanHeading skeleton={skeleton} order={4} />
      </div>
      {loading ? (
        <LoadingState label="Loading the span" />
      ) : error ? (
        <ErrorState error={error} title="Could not load this span" onRetry={onRetry} />
      ) : (
        span && (
          <>
            {span.error && (
              <Alert color="red" variant="light" icon={<IconAlertTriangle size={18} />} title="Error">
                <ScrollArea.Autosize mah={200}>
                  <Code block fz="xs" bg="transparent" style={{ whiteSpace: 'pre', padding: 0 }}>
                    {span.error}
                  </Code>
                </ScrollArea.Autosize>
              </Alert>
            )}
            {messages.length ? (
              <Section title={`Messages (${messages.length})`}>
                <ChatView messages={messages} />
              </Section>
            ) : (
              <>
                <Section title="Inputs">
                  <Payload value={span.inputs} label="the inputs" />
                </Section>
                <Section title="Output">
                  <Payload value={span.output} label="the output" />
                </Section>
              </>
            )}
            {span.target != null && (
              <Section title="Target">
                <Payload value={span.target} label="the target" />
              </Section>
            )}
          </>
        )
      )}
      {!loading && !error && !span && (
        <Text size="sm" c="dimmed">
          Pick a span in the tree.
        </Text>
      )}
    </Stack>
  );
}
