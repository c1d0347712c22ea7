import { Button, Group, Stack, Switch, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChevronDown, IconChevronRight, IconEdit } from '@tabler/icons-react';
import { useId, useState } from 'react';
import { errorMessage } from '../../../api/client';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { ErrorState, LoadingState } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { conditionOf, describeFilter } from '../../../lib/filter-fields';
import { useDeleteMonitor, useMonitor, useUpdateMonitor, type Monitor } from '../api';
import { describeCondition, formatMetric, METRIC_LABELS, thresholdOf } from '../lib/monitors';
import { MetricChart } from './MetricChart';
import { MonitorDetail } from './MonitorDetail';
import { StateBadge } from './StateBadge';

/** Columns of a monitor's row: what its detail panel spans. */
export const MONITOR_COLUMNS = ['Monitor', 'State', 'Last 24 hours', 'Channels', 'Enabled'];

/** One monitor: what it watches, its state, its metric's last day, and its changes and deliveries on demand. */
export function MonitorRow({
  monitor: m,
  canWrite,
  onEdit,
}: {
  monitor: Monitor;
  canWrite: boolean;
  onEdit: () => void;
}) {
  const detail = useMonitor(m.id);
  const update = useUpdateMonitor();
  const remove = useDeleteMonitor();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  // The switch shows what was asked while the change is saved and the list read again.
  const enabled = update.isPending && update.variables.enabled !== undefined ? update.variables.enabled : m.enabled;
  const metric = m.metric === 'score_mean' ? `Mean of the score "${m.score_name}"` : METRIC_LABELS[m.metric];
  const filters = m.filters.map((f) => describeFilter(conditionOf(f)));
  return (
    <>
      <Table.Tr>
        <Table.Td maw={340}>
          <Text size="sm" fw={600}>
            {m.name}
          </Text>
          <Text size="xs">
            {metric} over {m.window_minutes} min, {describeCondition(m.metric, m.condition)}
          </Text>
          <Text size="xs" c="dimmed">
            {filters.length ? `Where ${filters.join(' and ')}` : 'Every production trace'} · at least {m.min_samples}{' '}
            traces
          </Text>
        </Table.Td>
        <Table.Td>
          <Stack gap={2}>
            <StateBadge state={m.state} />
            <Text size="xs">{formatMetric(m.metric, m.last_value)}</Text>
            {m.last_evaluated_at ? (
              <Text size="xs" c="dimmed">
                read <Timestamp value={m.last_evaluated_at} size="xs" />
              </Text>
            ) : (
              <Text size="xs" c="dimmed">
                not read yet
              </Text>
            )}
          </Stack>
        </Table.Td>
        <Table.Td w={220}>
          {detail.isPending ? (
            <Text size="xs" c="dimmed">
              Loading…
            </Text>
          ) : detail.isError ? (
            <Text size="xs" c="red">
              {errorMessage(detail.error)}
            </Text>
          ) : (
            <MetricChart
              compact
              metric={m.metric}
              series={detail.data.series}
              threshold={thresholdOf(m.condition)}
              minSamples={m.min_samples}
              label={`${m.name}, ${metric}`}
            />
          )}
        </Table.Td>
        <Table.Td>
          {m.channels.length ? (
            <Stack gap={0}>
              {m.channels.map((c, i) => (
                <Text key={i} size="xs" truncate maw={200} title={c.url}>
                  {c.kind === 'slack' ? 'Slack' : 'Webhook'}: {new URL(c.url).host}
                </Text>
              ))}
            </Stack>
          ) : (
            <Text size="xs" c="dimmed">
              None: recorded only
            </Text>
          )}
        </Table.Td>
        <Table.Td>
          <Switch
            aria-label={`${m.name} enabled`}
            checked={enabled}
            disabled={!canWrite}
            onChange={(e) =>
              update.mutate(
                { id: m.id, enabled: e.currentTarget.checked },
                { onError: (err) => notifications.show({ color: 'red', message: errorMessage(err) }) },
              )
            }
          />
        </Table.Td>
        <Table.Td>
          <Group gap={4} justify="flex-end" wrap="nowrap">
            <Button
              size="xs"
              variant="subtle"
              leftSection={open ? <IconChevronDown size={14} /> : <IconChevronRight size={14} />}
              aria-expanded={open}
              aria-controls={open ? panelId : undefined}
              aria-label={`History of ${m.name}`}
              onClick={() => setOpen((o) => !o)}
            >
              History
            </Button>
            {canWrite && (
              <>
                <Button
                  size="xs"
                  variant="subtle"
                  leftSection={<IconEdit size={14} />}
                  onClick={onEdit}
                  aria-label={`Edit ${m.name}`}
                >
                  Edit
                </Button>
                <DeleteButton
                  label={`Delete the monitor ${m.name}`}
                  question={`Delete the monitor "${m.name}"? Its history and deliveries go with it.`}
                  onDelete={() => remove.mutateAsync(m.id)}
                />
              </>
            )}
          </Group>
        </Table.Td>
      </Table.Tr>
      {open && (
        <Table.Tr>
          <Table.Td colSpan={MONITOR_COLUMNS.length + 1} id={panelId} bg="var(--mantine-color-default-hover)">
            {detail.isPending ? (
              <LoadingState label="Loading the history" />
            ) : detail.isError ? (
              <ErrorState error={detail.error} title="Could not load the history" onRetry={() => detail.refetch()} />
            ) : (
              <MonitorDetail monitor={detail.data} />
            )}
          </Table.Td>
        </Table.Tr>
      )}
    </>
  );
}
