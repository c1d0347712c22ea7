import { Badge, Group, Text } from '@mantine/core';
import { useSpanEvalResults } from '../../../api/eval-metrics';

/**
 * Which version of each metric scored the span: a score keeps the version that made it after the metric
 * is edited. Nothing when no metric evaluated the span (its scores are the client's own).
 */
export function EvalVersions({ traceId }: { traceId: string }) {
  const results = useSpanEvalResults(traceId);
  if (results.isPending) return null;
  if (results.isError)
    return (
      <Text size="xs" c="dimmed">
        The versions of the metrics that scored this span could not be read.
      </Text>
    );
  const made = Object.entries(results.data).filter(([, r]) => r.metric_version !== undefined);
  if (!made.length) return null;
  return (
    <Group gap={6} role="group" aria-label="Evaluated by">
      <Text size="xs" c="dimmed">
        Evaluated by
      </Text>
      {made.map(([name, r]) => (
        <Badge key={name} variant="light" color="gray" tt="none" size="sm">
          {name} · version {r.metric_version}
        </Badge>
      ))}
    </Group>
  );
}
