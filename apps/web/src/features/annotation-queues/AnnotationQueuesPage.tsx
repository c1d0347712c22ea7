import { Button, Paper, Stack, Table, Text, VisuallyHidden } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { useParams } from 'react-router';
import { useCriteria } from '../../api/criteria';
import { usePermissions } from '../../api/roles';
import { ProjectHeader } from '../../components/ProjectHeader';
import { EmptyState, ErrorState, LoadingState } from '../../components/ui/StateViews';
import { useQueues, type AnnotationQueue } from './api';
import { AddTracesForm } from './components/AddTracesForm';
import { QueueForm } from './components/QueueForm';
import { QueueRow } from './components/QueueRow';

/**
 * A project's annotation queues: traces brought to reviewers one at a time, with the criteria they fill in;
 * each queue's progress and reviewers, and for a writer the way to create, fill, edit and review them.
 */
export default function AnnotationQueuesPage() {
  const { projectUuid = '' } = useParams();
  const queues = useQueues(projectUuid);
  const criteria = useCriteria();
  const { canWrite } = usePermissions();
  // The queue being edited ('new' while one is created), and the one traces are being added to.
  const [editing, setEditing] = useState<AnnotationQueue | 'new' | null>(null);
  const [adding, setAdding] = useState<AnnotationQueue | null>(null);
  const create = (
    <Button leftSection={<IconPlus size={16} />} onClick={() => setEditing('new')}>
      Create queue
    </Button>
  );

  return (
    <Stack gap="md">
      <ProjectHeader
        projectUuid={projectUuid}
        section="annotation-queues"
        title="Annotation queues"
        // The empty list offers its own.
        right={canWrite && queues.data?.length !== 0 && create}
      />
      <Paper withBorder radius="md">
        {queues.isPending ? (
          <LoadingState label="Loading the queues" />
        ) : queues.isError ? (
          <Stack p="md">
            <ErrorState error={queues.error} title="Could not load the queues" onRetry={() => queues.refetch()} />
          </Stack>
        ) : queues.data.length === 0 ? (
          <EmptyState title="No queues yet">
            <Text size="sm" c="dimmed">
              A queue brings traces to reviewers one at a time: fill it with a sample of the project&apos;s traces, and
              each reviewer annotates the next one by the queue&apos;s criteria, with its instructions in view.
            </Text>
            {canWrite && create}
          </EmptyState>
        ) : (
          <Table.ScrollContainer minWidth={1000}>
            <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Annotation queues">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Queue</Table.Th>
                  <Table.Th>Criteria</Table.Th>
                  <Table.Th>Progress</Table.Th>
                  <Table.Th>Reviewers</Table.Th>
                  {canWrite && (
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  )}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {queues.data.map((q) => (
                  <QueueRow
                    key={q.id}
                    queue={q}
                    criteria={criteria.data}
                    canWrite={canWrite}
                    onEdit={() => setEditing(q)}
                    onAddTraces={() => setAdding(q)}
                  />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Paper>
      {editing && (
        <QueueForm
          projectUuid={projectUuid}
          queue={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      {adding && <AddTracesForm queue={adding} onClose={() => setAdding(null)} />}
    </Stack>
  );
}
