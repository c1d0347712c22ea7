import { Badge, Button, Grid, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useEvalMetrics } from '../../api/eval-metrics';
import { usePermissions } from '../../api/roles';
import type { EvalMetric } from '../../api/types';
import { DeleteButton } from '../../components/ui/DeleteButton';
import { QueryPanel } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { useUrlState } from '../../hooks/use-url-state';
import { useDeleteEvalMetric } from './api';
import { typeLabel } from './metric-draft';
import { EditMetricForm, NewMetricForm } from './MetricForm';
import { MetricVersions } from './MetricVersions';
import { evalsCodec } from './url-state';

/** The organization's evaluation metrics: spans name them in `evaluation_metric_names` to be scored. */
export default function EvalMetricsPage() {
  const metrics = useEvalMetrics();
  const remove = useDeleteEvalMetric();
  const { canWrite } = usePermissions();
  const [{ metric: openId }, set] = useUrlState(evalsCodec);
  const open = metrics.data?.find((m) => m.id === openId) ?? null;
  return (
    <Stack gap="md">
      <Title order={2}>Evaluation metrics</Title>
      <Grid>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <QueryPanel query={metrics} loading="Loading the metrics" empty="No metrics yet: create one with the form.">
            {(rows) => (
              <Table aria-label="Evaluation metrics" verticalSpacing="sm" horizontalSpacing="md">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Type</Table.Th>
                    <Table.Th>Version</Table.Th>
                    <Table.Th>Created</Table.Th>
                    <Table.Th />
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((m) => (
                    <Table.Tr key={m.id} aria-selected={m.id === openId}>
                      <Table.Td fw={500}>{m.name}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" tt="none">
                          {typeLabel(m.type)}
                        </Badge>
                      </Table.Td>
                      <Table.Td ff="monospace">v{m.version}</Table.Td>
                      <Table.Td>
                        <Timestamp value={m.created_at} size="sm" />
                      </Table.Td>
                      <Table.Td ta="right">
                        <Group gap={4} justify="flex-end" wrap="nowrap">
                          <Button
                            variant="subtle"
                            size="xs"
                            aria-label={`${canWrite ? 'Edit' : 'View'} the metric ${m.name}`}
                            aria-pressed={m.id === openId}
                            onClick={() => set({ metric: m.id })}
                          >
                            {canWrite ? 'Edit' : 'View'}
                          </Button>
                          {canWrite && (
                            <DeleteButton
                              label={`Delete the metric ${m.name}`}
                              question={`Delete the metric "${m.name}"? Spans that name it will no longer be scored by it.`}
                              onDelete={async () => {
                                await remove.mutateAsync(m.id);
                                if (m.id === openId) set({ metric: null });
                              }}
                            />
                          )}
                        </Group>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </QueryPanel>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <OpenMetric
            metric={open}
            missing={openId !== null && metrics.isSuccess && !open}
            canWrite={canWrite}
            onClose={() => set({ metric: null })}
          />
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

/** Beside the list: the metric open (its configuration, editable, and its versions), else the new metric's form. */
function OpenMetric({
  metric,
  missing,
  canWrite,
  onClose,
}: {
  metric: EvalMetric | null;
  missing: boolean;
  canWrite: boolean;
  onClose: () => void;
}) {
  if (!metric)
    return (
      <Stack gap="sm">
        {missing && (
          <Text size="sm" c="dimmed" role="status">
            The metric in the link no longer exists: pick one in the list.
          </Text>
        )}
        {canWrite && <NewMetricForm />}
      </Stack>
    );
  return (
    <Stack gap="sm">
      <Group justify="flex-end">
        <Button variant="default" size="xs" onClick={onClose}>
          {canWrite ? 'New metric' : 'Close'}
        </Button>
      </Group>
      {/* Keyed by version: a saved edit starts the form again from the new version. */}
      <EditMetricForm key={`${metric.id}:${metric.version}`} metric={metric} canWrite={canWrite} />
      <MetricVersions metric={metric} />
    </Stack>
  );
}
