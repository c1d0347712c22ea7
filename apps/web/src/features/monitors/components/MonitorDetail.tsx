import { Badge, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Timestamp } from '../../../components/ui/Timestamp';
import type { MonitorDetail as Detail } from '../api';
import { formatMetric } from '../lib/monitors';
import { StateBadge } from './StateBadge';

const DELIVERY_COLORS = { pending: 'yellow', delivered: 'teal', failed: 'red' } as const;

/** A monitor's changes of state and the deliveries that told them, each with its attempts. */
export function MonitorDetail({ monitor }: { monitor: Detail }) {
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
      <Stack gap="xs">
        <Title order={4} size="h6">
          Changes of state
        </Title>
        {monitor.history.length === 0 ? (
          <Text size="sm" c="dimmed">
            None yet: the monitor has been {monitor.state === 'no_data' ? 'without enough traces' : monitor.state} since
            it was made.
          </Text>
        ) : (
          <Table fz="sm" verticalSpacing={4} aria-label={`Changes of state of ${monitor.name}`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Change</Table.Th>
                <Table.Th>Value</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {monitor.history.map((h) => (
                <Table.Tr key={h.at}>
                  <Table.Td>
                    <Timestamp value={h.at} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <StateBadge state={h.previous_state} /> → <StateBadge state={h.state} />
                    </Group>
                  </Table.Td>
                  <Table.Td>{formatMetric(monitor.metric, h.value)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      <Stack gap="xs">
        <Title order={4} size="h6">
          Deliveries
        </Title>
        {monitor.deliveries.length === 0 ? (
          <Text size="sm" c="dimmed">
            {monitor.channels.length
              ? 'None yet: a delivery goes to each channel when the monitor fires or stops firing.'
              : 'The monitor has no channel: its changes are recorded here only.'}
          </Text>
        ) : (
          <Table fz="sm" verticalSpacing={4} aria-label={`Deliveries of ${monitor.name}`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>To</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Attempts</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {monitor.deliveries.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <Timestamp value={d.created_at} size="sm" />
                  </Table.Td>
                  <Table.Td maw={220}>
                    <Text size="sm" truncate title={d.url}>
                      {d.channel}: {d.url}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={DELIVERY_COLORS[d.status]}>
                      {d.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Stack gap={0}>
                      {d.attempts.map((a) => (
                        <Text key={a.at} size="xs" c={a.error ? 'red' : undefined}>
                          {a.status_code ?? '—'} {a.error ? `· ${a.error}` : ''} · {a.duration_ms} ms
                        </Text>
                      ))}
                    </Stack>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </SimpleGrid>
  );
}
