import { notifications } from '@mantine/notifications';
import { useAddItems, type AnnotationQueue, type QueueItemsRequest } from '../api/annotation-queues';
import { formatCount } from '../lib/format';

/**
 * Adds traces to a queue and says how many were new to it: a trace already in the queue is not added again,
 * so "none added" is an answer too (the queue's page, and "Add to queue" on the traces page).
 */
export function useAddToQueue() {
  const add = useAddItems();
  const mutate = (
    variables: { queue: AnnotationQueue; body: QueueItemsRequest },
    { onSuccess }: { onSuccess: () => void },
  ) =>
    add.mutate(variables, {
      onSuccess: ({ added }) => {
        const { name } = variables.queue;
        notifications.show({
          color: 'teal',
          message: added
            ? `Added ${formatCount(added)} ${added === 1 ? 'trace' : 'traces'} to ${name}`
            : `No trace added to ${name}: the matching traces are in it already`,
        });
        onSuccess();
      },
    });
  return { ...add, mutate };
}
