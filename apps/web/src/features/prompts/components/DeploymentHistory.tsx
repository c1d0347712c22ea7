import { Badge, Button, Group, Paper, Stack, Table, Text } from '@mantine/core';
import { IconArrowBackUp } from '@tabler/icons-react';
import type { Deployment } from '../../../api/types';
import { ErrorState, LoadingState } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { useDeploymentHistory } from '../api';
import { versionLabel, type DeploymentMove } from './MoveDeploymentModal';

/**
 * One deployment's moves, newest first (from which version to which, who moved it and when), and a roll
 * back to the version it served before its last move, for those who may deploy.
 */
export function DeploymentHistory({
  deployment,
  canWrite,
  onMove,
}: {
  deployment: Deployment;
  canWrite: boolean;
  onMove: (move: DeploymentMove) => void;
}) {
  const id = deployment.deployment_id;
  const current = deployment.prompt_version;
  const history = useDeploymentHistory(id);
  const last = history.data?.moves[0];
  // The version before the last move, unless the deployment serves it already (or was only created).
  const previous = last?.from && last.from.id !== current.id ? last.from : null;

  return (
    <Paper withBorder radius="md" p="sm">
      <Stack gap="xs">
        <Group justify="space-between">
          <Group gap="xs">
            <Badge variant="light" tt="none">
              {id}
            </Badge>
            <Text size="sm">serves {versionLabel(current)}</Text>
          </Group>
          {canWrite && previous && (
            <Button
              size="xs"
              variant="light"
              color="orange"
              leftSection={<IconArrowBackUp size={14} />}
              onClick={() => onMove({ deploymentId: id, from: current, to: previous, rollBack: true })}
            >
              Roll back to v{previous.version_number}
            </Button>
          )}
        </Group>
        {history.isPending ? (
          <LoadingState label={`Loading the history of ${id}`} />
        ) : history.isError ? (
          <ErrorState
            error={history.error}
            title={`Could not load the history of ${id}`}
            onRetry={() => history.refetch()}
          />
        ) : history.data.moves.length === 0 ? (
          <Text size="sm" c="dimmed">
            No moves recorded: the audit log keeps them for as long as it keeps traces, and this deployment&apos;s are
            older.
          </Text>
        ) : (
          <Table aria-label={`History of ${id}`} verticalSpacing={4} horizontalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Move</Table.Th>
                <Table.Th>By</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {history.data.moves.map((m) => (
                <Table.Tr key={`${m.at}/${m.to.id}`}>
                  <Table.Td>
                    <Timestamp value={m.at} size="sm" />
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {m.from ? `${refLabel(m.from, current.name)} → ` : 'created at '}
                      <b>{refLabel(m.to, current.name)}</b>
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {m.by.label ?? 'an unlabelled key'}{' '}
                      <Text span size="xs" c="dimmed">
                        ({m.by.role})
                      </Text>
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Paper>
  );
}

/** A version by number alone when it is of this prompt; with its prompt's name when the deployment served another. */
const refLabel = (v: { name: string; version_number: number }, prompt: string) =>
  v.name === prompt ? `v${v.version_number}` : versionLabel(v);
