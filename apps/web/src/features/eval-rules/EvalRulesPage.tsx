import { Button, Paper, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { useParams } from 'react-router';
import { usePermissions } from '../../api/roles';
import type { EvalRule } from '../../api/types';
import { ProjectHeader } from '../../components/ProjectHeader';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useEvalRules } from './api';
import { BackfillForm } from './components/BackfillForm';
import { RuleForm } from './components/RuleForm';
import { RuleRow } from './components/RuleRow';

/**
 * A project's evaluation rules: metrics run on its new traces once each has settled (online evaluation),
 * on a sample, under a daily judge budget; and backfills of a rule over stored traces.
 */
export default function EvalRulesPage() {
  const { projectUuid = '' } = useParams();
  const rules = useEvalRules(projectUuid);
  const { canWrite } = usePermissions();
  // The rule being edited ('new' while one is created), and the one a backfill is being set up for.
  const [editing, setEditing] = useState<EvalRule | 'new' | null>(null);
  const [backfilling, setBackfilling] = useState<EvalRule | null>(null);
  const create = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
      Create rule
    </Button>
  );

  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="eval-rules"
        title="Eval rules"
        // The empty list offers its own.
        right={canWrite && rules.data?.length !== 0 && create}
      />
      <Paper withBorder radius="md">
        {rules.isPending ? (
          <LoadingState label="Loading the rules" />
        ) : rules.isError ? (
          <Stack p="md">
            <ErrorState error={rules.error} onRetry={() => rules.refetch()} />
          </Stack>
        ) : rules.data.length === 0 ? (
          <EmptyState title="No rules yet">
            <Text size="sm" c="dimmed">
              A rule scores this project&apos;s new traces automatically once they settle: the metrics you choose, on
              the share of traces you choose, with a daily limit on what its judges spend.
            </Text>
            {canWrite && create}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={1100}>
            <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Evaluation rules">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Rule</Table.Th>
                  <Table.Th>Metrics</Table.Th>
                  <Table.Th>Scores</Table.Th>
                  <Table.Th>Runs</Table.Th>
                  <Table.Th>Judge spend today</Table.Th>
                  <Table.Th>Latest backfill</Table.Th>
                  <Table.Th>Enabled</Table.Th>
                  {canWrite && (
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  )}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rules.data.map((r) => (
                  <RuleRow
                    key={r.id}
                    rule={r}
                    canWrite={canWrite}
                    onEdit={() => setEditing(r)}
                    onBackfill={() => setBackfilling(r)}
                  />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Paper>
      {editing && (
        <RuleForm
          projectUuid={projectUuid}
          rule={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      {backfilling && <BackfillForm rule={backfilling} onClose={() => setBackfilling(null)} />}
    </Stack>
  );
}
