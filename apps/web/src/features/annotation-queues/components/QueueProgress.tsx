import { Progress, Stack, Text } from '@mantine/core';
import { formatCount } from '../../../lib/format';
import type { AnnotationQueue } from '../../../api/annotation-queues';
import { progressOf } from '../lib/queues';

/** A queue's progress: a bar of its done and skipped items over all of them, and the counts by state. */
export function QueueProgress({ queue, detailed = false }: { queue: AnnotationQueue; detailed?: boolean }) {
  const { counts } = queue;
  const { total, finished, percent } = progressOf(counts);
  return (
    <Stack gap={4} miw={180}>
      <Progress value={percent} size="md" color="teal" aria-label={`Reviewed in ${queue.name}`} />
      <Text size="xs">{total ? `${formatCount(finished)} of ${formatCount(total)} reviewed` : 'No items yet'}</Text>
      {detailed && total > 0 && (
        <Text size="xs" c="dimmed">
          {formatCount(counts.pending)} pending · {formatCount(counts.in_review)} in review · {formatCount(counts.done)}{' '}
          done · {formatCount(counts.skipped)} skipped
        </Text>
      )}
    </Stack>
  );
}
