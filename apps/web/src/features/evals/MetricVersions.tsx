import { Badge, Group, Paper, Stack, Text } from '@mantine/core';
import type { EvalMetric } from '../../api/types';
import { Payload } from '../../components/ui/Payload';
import { ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useEvalMetricVersions } from './api';

/** A metric's versions, newest first, each with its configuration: what made the scores it wrote. */
export function MetricVersions({ metric }: { metric: EvalMetric }) {
  const versions = useEvalMetricVersions(metric.id);
  return (
    <Paper withBorder radius="md" p="md">
      <Stack gap="sm">
        <Text fw={600}>Versions</Text>
        <Text size="sm" c="dimmed">
          Each score records the version that made it: scores written before an edit keep their version.
        </Text>
        {versions.isPending ? (
          <LoadingState label="Loading the versions" />
        ) : versions.isError ? (
          <ErrorState error={versions.error} onRetry={() => versions.refetch()} />
        ) : (
          <Stack gap="sm" component="ol" aria-label={`Versions of ${metric.name}`} p={0} m={0}>
            {versions.data.map((v) => (
              <Stack key={v.version} gap={4} component="li" style={{ listStyle: 'none' }}>
                <Group gap="xs">
                  <Badge variant={v.version === metric.version ? 'filled' : 'light'} tt="none">
                    Version {v.version}
                  </Badge>
                  {v.version === metric.version && (
                    <Text size="xs" c="dimmed">
                      current
                    </Text>
                  )}
                  <Timestamp value={v.created_at} size="xs" c="dimmed" />
                </Group>
                {Object.keys(v.config).length ? (
                  <Payload value={v.config} label={`the configuration of version ${v.version}`} maxHeight={160} />
                ) : (
                  <Text size="sm" c="dimmed">
                    No settings
                  </Text>
                )}
              </Stack>
            ))}
          </Stack>
        )}
      </Stack>
    </Paper>
  );
}
