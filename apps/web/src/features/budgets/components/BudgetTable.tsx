import { Badge, Button, Group, Progress, Stack, Table, Text } from '@mantine/core';
import { IconPencil } from '@tabler/icons-react';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { Timestamp } from '../../../components/ui/Timestamp';
import { formatCost } from '../../../lib/format';
import type { Budget } from '../api';
import { alertText, barColor, scopeLabel, sharesText, spentPercent } from '../lib/labels';

/** Each budget with its bar of spend against its limit; Edit and Delete when `onEdit`/`onDelete` are given. */
export function BudgetTable({
  budgets,
  onEdit,
  onDelete,
}: {
  budgets: Budget[];
  onEdit: ((b: Budget) => void) | null;
  onDelete: ((b: Budget) => Promise<unknown>) | null;
}) {
  return (
    <Table aria-label="Budgets" verticalSpacing="sm" highlightOnHover>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Budget</Table.Th>
          <Table.Th w="38%">Spend this period</Table.Th>
          <Table.Th>Period ends</Table.Th>
          <Table.Th>At the limit</Table.Th>
          <Table.Th>Alerts</Table.Th>
          {(onEdit || onDelete) && <Table.Th aria-label="Actions" />}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {budgets.map((b) => (
          <Table.Tr key={b.id}>
            <Table.Td>
              <Text size="sm" fw={500}>
                {scopeLabel(b.scope)}
              </Text>
              <Text size="xs" c="dimmed">
                {formatCost(b.limit_usd)} a {b.period}
              </Text>
            </Table.Td>
            <Table.Td>
              <Stack gap={4}>
                <Progress
                  value={spentPercent(b)}
                  color={barColor(b)}
                  size="lg"
                  aria-label={`${scopeLabel(b.scope)}: ${Math.round(spentPercent(b))}% of the limit spent`}
                />
                <Text size="xs" c="dimmed">
                  {formatCost(b.spent_usd)} of {formatCost(b.limit_usd)} ·{' '}
                  {b.spent_usd > b.limit_usd
                    ? `over by ${formatCost(b.spent_usd - b.limit_usd)}`
                    : `${formatCost(b.remaining_usd)} left`}
                  {b.reserved_usd > 0 && ` · ${formatCost(b.reserved_usd)} reserved`}
                </Text>
              </Stack>
            </Table.Td>
            <Table.Td>
              <Timestamp value={b.period_ends_at} size="sm" />
            </Table.Td>
            <Table.Td>
              <Badge variant="light" color={b.action === 'block' ? 'red' : 'blue'}>
                {b.action === 'block' ? 'Block' : 'Alert'}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="sm">{b.alert_at.length ? sharesText(b.alert_at) : '–'}</Text>
              <Text size="xs" c="dimmed">
                {b.channels.length ? b.channels.map((c) => c.kind).join(', ') : 'no channels'}
              </Text>
              {b.alerts.map((a) => (
                <Text key={a.share} size="xs" c={a.deliveries.some((d) => d.status === 'failed') ? 'red' : undefined}>
                  {alertText(a)}
                </Text>
              ))}
            </Table.Td>
            {(onEdit || onDelete) && (
              <Table.Td>
                <Group gap={4} justify="flex-end" wrap="nowrap">
                  {onEdit && (
                    <Button
                      size="xs"
                      variant="subtle"
                      leftSection={<IconPencil size={14} />}
                      aria-label={`Edit the budget of ${scopeLabel(b.scope).toLowerCase()}`}
                      onClick={() => onEdit(b)}
                    >
                      Edit
                    </Button>
                  )}
                  {onDelete && (
                    <DeleteButton
                      label={`Delete the budget of ${scopeLabel(b.scope).toLowerCase()}`}
                      question={`Delete the budget of ${scopeLabel(b.scope).toLowerCase()}? Its calls will no longer be limited by it.`}
                      onDelete={() => onDelete(b)}
                    />
                  )}
                </Group>
              </Table.Td>
            )}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
