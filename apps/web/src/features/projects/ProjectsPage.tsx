import { Anchor, Badge, Group, Paper, Stack, Table, Text, Title } from '@mantine/core';
import { IconRocket } from '@tabler/icons-react';
import { Link, useNavigate } from 'react-router';
import { useProjects } from '../../api/projects';
import { ClientSetup } from '../../components/ClientSetup';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { formatCost, formatCount, formatPercent } from '../../lib/format';
import { formatRelative, parseApiTime } from '../../lib/time';

export default function ProjectsPage() {
  const projects = useProjects();
  const navigate = useNavigate();

  if (projects.isPending) return <LoadingState label="Loading projects" />;
  if (projects.isError)
    return <ErrorState error={projects.error} title="Could not load the projects" onRetry={() => projects.refetch()} />;
  if (!projects.data.length) {
    return (
      <EmptyState title="No traces yet: send your first one" icon={<IconRocket size={26} />} width={760}>
        <Text c="dimmed" size="sm">
          Projects appear here when something writes to them: an official client, curl, the completion gateway or
          OpenTelemetry. Make a key, then pick a way in:
        </Text>
        <ClientSetup />
      </EmptyState>
    );
  }

  const sorted = [...projects.data].sort(
    (a, b) => (b.last_activity ?? '').localeCompare(a.last_activity ?? '') || a.name.localeCompare(b.name),
  );
  return (
    <Stack gap="md" maw={1200} mx="auto">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2}>Projects</Title>
          <Text c="dimmed" size="sm">
            {sorted.length} project{sorted.length === 1 ? '' : 's'}; activity over the last 24 hours.
          </Text>
        </div>
      </Group>
      <Paper withBorder radius="md">
        <Table highlightOnHover verticalSpacing="sm" horizontalSpacing="md" aria-label="Projects">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Project</Table.Th>
              <Table.Th ta="right">Traces</Table.Th>
              <Table.Th>Last activity</Table.Th>
              <Table.Th ta="right">Traces, 24 h</Table.Th>
              <Table.Th ta="right">Cost, 24 h</Table.Th>
              <Table.Th ta="right">Error rate, 24 h</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {sorted.map((p) => {
              const last = parseApiTime(p.last_activity);
              const to = `/projects/${p.uuid}/traces`;
              return (
                <Table.Tr key={p.uuid} className="trace-row" onClick={() => navigate(to)}>
                  <Table.Td>
                    <Anchor component={Link} to={to} fw={600} onClick={(e) => e.stopPropagation()}>
                      {p.name}
                    </Anchor>
                    <Text size="xs" c="dimmed">
                      created <Timestamp value={p.created_at} size="xs" />
                    </Text>
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatCount(p.traces)}
                  </Table.Td>
                  <Table.Td>
                    {last ? (
                      <Text size="sm" title={last.toLocaleString()}>
                        {formatRelative(last)}
                      </Text>
                    ) : (
                      <Text size="sm" c="dimmed">
                        never
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatCount(p.traces_24h)}
                  </Table.Td>
                  <Table.Td ta="right" ff="monospace">
                    {formatCost(p.cost_24h)}
                  </Table.Td>
                  <Table.Td ta="right">
                    {p.error_rate_24h == null ? (
                      <Text c="dimmed" size="sm">
                        –
                      </Text>
                    ) : (
                      <Badge
                        variant="light"
                        color={p.error_rate_24h > 0.05 ? 'red' : p.error_rate_24h > 0 ? 'yellow' : 'teal'}
                      >
                        {formatPercent(p.error_rate_24h)}
                      </Badge>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Paper>
    </Stack>
  );
}
