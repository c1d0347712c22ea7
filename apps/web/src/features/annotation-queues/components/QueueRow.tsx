import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { IconEdit, IconListCheck, IconPlus } from '@tabler/icons-react';
import { Link } from 'react-router';
import type { Criterion } from '../../../api/types';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { formatAuthor, formatCount } from '../../../lib/format';
import type { AnnotationQueue } from '../../../api/annotation-queues';
import { useDeleteQueue } from '../api';
import { QueueAgreement } from './QueueAgreement';
import { QueueProgress } from './QueueProgress';

/** One queue: its criteria, progress, reviewers and, for a writer, review / add traces / edit / delete. */
export function QueueRow({
  queue: q,
  criteria,
  canWrite,
  onEdit,
  onAddTraces,
}: {
  queue: AnnotationQueue;
  criteria: Criterion[] | undefined;
  canWrite: boolean;
  onEdit: () => void;
  onAddTraces: () => void;
}) {
  const remove = useDeleteQueue();
  return (
    <Table.Tr>
      <Table.Td maw={320}>
        <Text fw={600}>{q.name}</Text>
        {q.instructions && (
          <Text size="xs" c="dimmed" lineClamp={2} title={q.instructions}>
            {q.instructions}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        {q.criterion_ids.length ? (
          <Stack gap={4}>
            {q.criterion_ids.map((id) => {
              const c = criteria?.find((c) => c.id === id);
              return (
                <div key={id}>
                  <Badge variant="light" color="gray" tt="none">
                    {c?.name ?? `deleted criterion ${id.slice(0, 8)}`}
                  </Badge>
                  {c?.eval_metric_name && <QueueAgreement criterion={c} projectUuid={q.project_uuid} />}
                </div>
              );
            })}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            None
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <QueueProgress queue={q} detailed />
      </Table.Td>
      <Table.Td>
        {q.reviewers.length ? (
          <Stack gap={2}>
            {q.reviewers.map((r) => (
              <Text key={r.reviewer} size="xs" title={r.reviewer}>
                <Text span fw={500} size="xs">
                  {formatAuthor(r.reviewer)}
                </Text>{' '}
                <Text span c="dimmed" size="xs">
                  {formatCount(r.done)} done · {formatCount(r.skipped)} skipped
                </Text>
              </Text>
            ))}
          </Stack>
        ) : (
          <Text size="sm" c="dimmed">
            None yet
          </Text>
        )}
      </Table.Td>
      {canWrite && (
        <Table.Td>
          <Group gap={4} justify="flex-end" wrap="nowrap">
            <Button
              size="xs"
              component={Link}
              to={`/projects/${q.project_uuid}/annotation-queues/${q.id}/review`}
              leftSection={<IconListCheck size={14} />}
              aria-label={`Review ${q.name}`}
            >
              Review
            </Button>
            <Button
              size="xs"
              variant="default"
              leftSection={<IconPlus size={14} />}
              onClick={onAddTraces}
              aria-label={`Add traces to ${q.name}`}
            >
              Add traces
            </Button>
            <Button
              size="xs"
              variant="subtle"
              leftSection={<IconEdit size={14} />}
              onClick={onEdit}
              aria-label={`Edit ${q.name}`}
            >
              Edit
            </Button>
            <DeleteButton
              label={`Delete the queue ${q.name}`}
              question={`Delete the queue "${q.name}"? Its items go with it; the annotations made in it stay on the traces.`}
              onDelete={() => remove.mutateAsync(q.id)}
            />
          </Group>
        </Table.Td>
      )}
    </Table.Tr>
  );
}
