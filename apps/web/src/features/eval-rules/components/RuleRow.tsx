import { Badge, Button, Group, Progress, Stack, Switch, Table, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconClockPause, IconEdit, IconHistory } from '@tabler/icons-react';
import { errorMessage } from '../../../api/client';
import type { EvalBackfill, EvalRule } from '../../../api/types';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { Timestamp } from '../../../components/ui/Timestamp';
import { formatCost, formatCount, formatPercent } from '../../../lib/format';
import { formatLocal, parseApiTime } from '../../../lib/time';
import { useCancelBackfill, useDeleteEvalRule, useUpdateEvalRule } from '../api';
import { conditionOf, describeFilter } from '../../../lib/filter-fields';

const notifyError = (err: unknown) => notifications.show({ color: 'red', message: errorMessage(err) });

const BACKFILL_COLOR = { running: 'blue', done: 'teal', cancelled: 'gray' } as const;

/** One rule of the list: what it scores, how much it has run and spent, and its latest backfill. */
export function RuleRow({
  rule,
  canWrite,
  onEdit,
  onBackfill,
}: {
  rule: EvalRule;
  canWrite: boolean;
  onEdit: () => void;
  onBackfill: () => void;
}) {
  const update = useUpdateEvalRule();
  const remove = useDeleteEvalRule();
  // The switch shows what was asked while the change is saved and the list read again.
  const enabled = update.isPending && update.variables.enabled !== undefined ? update.variables.enabled : rule.enabled;
  const filters = rule.filters.map((f) => describeFilter(conditionOf(f)));
  return (
    <Table.Tr>
      <Table.Td>
        <Text size="sm" fw={500}>
          {rule.name}
        </Text>
      </Table.Td>
      <Table.Td>
        <Group gap={4}>
          {rule.metric_names.map((m) => (
            <Badge key={m} variant="light" tt="none">
              {m}
            </Badge>
          ))}
        </Group>
      </Table.Td>
      <Table.Td>
        <Stack gap={2}>
          <Text size="sm">{formatPercent(rule.sample_rate)} sampled</Text>
          <Text size="sm">{rule.target.kind === 'root' ? 'Root span' : `Spans named "${rule.target.span_name}"`}</Text>
          <Text size="xs" c="dimmed">
            {filters.length ? `Where ${filters.join(' and ')}` : 'Every trace'}
          </Text>
        </Stack>
      </Table.Td>
      <Table.Td>
        <Text size="sm" ff="monospace">
          {formatCount(rule.runs.done)} done
        </Text>
        <Text size="xs" c="dimmed" ff="monospace">
          {formatCount(rule.runs.queued)} queued
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm" ff="monospace">
          {formatCost(rule.cost_today)}
          {rule.daily_cost_limit === null ? '' : ` of ${formatCost(rule.daily_cost_limit)}`}
        </Text>
        {rule.daily_cost_limit === null && (
          <Text size="xs" c="dimmed">
            no limit
          </Text>
        )}
        {rule.paused_until && <Paused until={rule.paused_until} />}
      </Table.Td>
      <Table.Td miw={160}>
        {rule.backfills[0] ? (
          <BackfillProgress rule={rule} backfill={rule.backfills[0]} canWrite={canWrite} />
        ) : (
          <Text size="sm" c="dimmed">
            None
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Switch
          checked={enabled}
          disabled={!canWrite || update.isPending}
          aria-label={`${rule.name} enabled`}
          onChange={(e) => update.mutate({ id: rule.id, enabled: e.currentTarget.checked }, { onError: notifyError })}
        />
      </Table.Td>
      {canWrite && (
        <Table.Td>
          {/* The actions stack on a narrow screen rather than push the table past its box. */}
          <Group gap={4} justify="flex-end">
            <Button
              size="xs"
              variant="subtle"
              leftSection={<IconEdit size={14} />}
              aria-label={`Edit the rule ${rule.name}`}
              onClick={onEdit}
            >
              Edit
            </Button>
            <Button
              size="xs"
              variant="subtle"
              leftSection={<IconHistory size={14} />}
              aria-label={`Backfill the rule ${rule.name}`}
              onClick={onBackfill}
            >
              Backfill…
            </Button>
            <DeleteButton
              label={`Delete the rule ${rule.name}`}
              question={`Delete the rule "${rule.name}"? It stops scoring new traces; the scores it made stay on their spans.`}
              onDelete={() => remove.mutateAsync(rule.id)}
            />
          </Group>
        </Table.Td>
      )}
    </Table.Tr>
  );
}

function Paused({ until }: { until: string }) {
  const date = parseApiTime(until);
  return (
    <Stack gap={2} mt={4} maw={220}>
      <Badge color="orange" variant="light" tt="none" leftSection={<IconClockPause size={12} />}>
        Paused until {date ? <time dateTime={date.toISOString()}>{formatLocal(date)}</time> : until}
      </Badge>
      <Text size="xs" c="dimmed">
        Today&apos;s judge spend reached the daily limit: new traces are not scored until the next UTC day.
      </Text>
    </Stack>
  );
}

function BackfillProgress({
  rule,
  backfill: b,
  canWrite,
}: {
  rule: EvalRule;
  backfill: EvalBackfill;
  canWrite: boolean;
}) {
  const cancel = useCancelBackfill();
  const percent = b.total ? Math.round((b.done / b.total) * 100) : b.status === 'done' ? 100 : 0;
  return (
    <Stack gap={4}>
      <Progress
        value={percent}
        color={BACKFILL_COLOR[b.status]}
        animated={b.status === 'running'}
        aria-label={`Backfill of ${rule.name}: ${formatCount(b.done)} of ${formatCount(b.total)} traces`}
      />
      <Group gap={6} justify="space-between" wrap="nowrap">
        <Text size="xs" ff="monospace">
          {formatCount(b.done)}/{formatCount(b.total)}
        </Text>
        <Badge size="xs" variant="light" color={BACKFILL_COLOR[b.status]}>
          {b.status}
        </Badge>
        <Text size="xs" ff="monospace">
          {formatCost(b.cost)}
        </Text>
      </Group>
      <Text size="xs" c="dimmed">
        <Timestamp value={b.from} size="xs" /> to <Timestamp value={b.to} size="xs" />
      </Text>
      {b.status === 'running' && canWrite && (
        <Group>
          <Button
            size="compact-xs"
            variant="default"
            loading={cancel.isPending}
            aria-label={`Cancel the backfill of ${rule.name}`}
            onClick={() => cancel.mutate({ ruleId: rule.id, backfillId: b.id }, { onError: notifyError })}
          >
            Cancel
          </Button>
        </Group>
      )}
    </Stack>
  );
}
