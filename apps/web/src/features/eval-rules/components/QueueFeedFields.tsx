import { Anchor, Checkbox, Fieldset, Group, NumberInput, Select, Stack, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useQueues } from '../../../api/annotation-queues';
import { errorMessage } from '../../../api/client';
import { errorAt } from '../../../lib/field-errors';
import type { RuleDraft } from '../lib/rules';

/**
 * Where the rule sends the traces it finds wanting: an annotation queue of the project, fed with each trace
 * whose evaluation failed, or whose score of one metric came out below a bound.
 */
export function QueueFeedFields({
  projectUuid,
  draft: d,
  onChange,
  errors,
}: {
  projectUuid: string;
  draft: RuleDraft;
  onChange: (change: Partial<RuleDraft>) => void;
  errors: Record<string, string>;
}) {
  const queues = useQueues(projectUuid);
  const queuesLink = (
    <Anchor component={Link} to={`/projects/${projectUuid}/annotation-queues`} inherit>
      Annotation queues
    </Anchor>
  );
  // A queue deleted since keeps its place, so that it can be taken out.
  const options = [
    ...(queues.data ?? []).map((q) => ({ value: q.id, label: q.name })),
    ...(d.queueId && queues.data && !queues.data.some((q) => q.id === d.queueId)
      ? [{ value: d.queueId, label: `deleted queue ${d.queueId.slice(0, 8)}` }]
      : []),
  ];
  return (
    <Fieldset legend="Send to people" variant="unstyled">
      <Stack gap="xs">
        <Select
          label="Annotation queue"
          description={
            queues.isError ? (
              `The queues could not load: ${errorMessage(queues.error)}`
            ) : queues.data?.length === 0 ? (
              <>No queue in this project yet: create one under {queuesLink}.</>
            ) : (
              'Traces the rule finds wanting are added to it for review.'
            )
          }
          placeholder={queues.isPending ? 'Loading the queues…' : 'None'}
          data={options}
          value={d.queueId}
          onChange={(queueId) => onChange({ queueId })}
          clearable
          maw={360}
          error={errors['annotation_queue.queue_id']}
        />
        {d.queueId && (
          <>
            <Checkbox
              label="When an evaluation fails (a judge's error, a timeout, an answer without a score)"
              checked={d.queueOnError}
              onChange={(e) => onChange({ queueOnError: e.currentTarget.checked })}
            />
            <Group gap="sm" align="flex-start">
              <Select
                label="When the score of"
                placeholder="No metric"
                data={d.metricNames}
                value={d.queueMetric}
                onChange={(queueMetric) => onChange({ queueMetric })}
                clearable
                w={240}
                error={errors['annotation_queue.on_result.metric_name']}
              />
              <NumberInput
                label="is below"
                placeholder="0.5"
                decimalScale={4}
                value={d.queueBelow}
                onChange={(queueBelow) => onChange({ queueBelow })}
                w={140}
                error={errors['annotation_queue.on_result.below']}
              />
            </Group>
            {errorAt(errors, 'annotation_queue') &&
              !Object.keys(errors).some((k) => k.startsWith('annotation_queue.')) && (
                <Text size="sm" c="red">
                  {errorAt(errors, 'annotation_queue')}
                </Text>
              )}
          </>
        )}
      </Stack>
    </Fieldset>
  );
}
