import { Anchor, Button, List, Select, Text } from '@mantine/core';
import { IconListCheck } from '@tabler/icons-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { useQueues, type QueueItemsRequest } from '../api/annotation-queues';
import { errorMessage } from '../api/client';
import { useAddToQueue } from '../hooks/use-add-to-queue';
import { describeFilter, filterOf } from '../lib/filter-fields';
import { formatCount } from '../lib/format';
import { filtersFromView, type TraceView } from '../lib/trace-view';
import { SampleSizeInput } from './SampleSizeInput';
import { FormModal } from './ui/FormModal';

type Props = {
  projectUuid: string;
  /** The traces picked in the table; none: a sample of the view's traces. */
  rootIds: string[];
  view: TraceView;
  /** How many traces the view holds, when known. */
  matching: number | null;
  onAdded: () => void;
};

/**
 * "Add to queue" on the traces table: the selected traces, or a random sample of the traces the view shows
 * (its filter, status and time range), go to one of the project's annotation queues.
 */
export function AddToQueue(props: Props) {
  const [open, setOpen] = useState(false);
  const n = props.rootIds.length;
  return (
    <>
      <Button size="xs" variant="default" leftSection={<IconListCheck size={14} />} onClick={() => setOpen(true)}>
        {n ? `Add ${n} to queue` : 'Add to queue'}
      </Button>
      {open && (
        <AddToQueueModal
          {...props}
          onClose={() => setOpen(false)}
          onAdded={() => {
            setOpen(false);
            props.onAdded();
          }}
        />
      )}
    </>
  );
}

function AddToQueueModal({ projectUuid, rootIds, view, matching, onAdded, onClose }: Props & { onClose: () => void }) {
  const queues = useQueues(projectUuid);
  const [queueId, setQueueId] = useState<string | null>(null);
  const [sampleSize, setSampleSize] = useState<number | string>(Math.min(50, matching ?? 50) || 50);
  // The time range's start is fixed when the dialog opens: what it says is what it sends.
  const [now] = useState(() => new Date());
  const add = useAddToQueue();
  const queue = queues.data?.find((q) => q.id === queueId);
  const picked = rootIds.length > 0;
  const conditions = filtersFromView(view, now);
  const searching = !picked && !!view.search.trim();

  const missing = !queue
    ? 'choose a queue'
    : searching
      ? 'clear the search, or select the traces to add'
      : !picked && sampleSize === ''
        ? 'give the sample size'
        : null;
  const submit = () => {
    const body: QueueItemsRequest = picked
      ? { trace_ids: rootIds }
      : { filters: conditions.map(filterOf), sample_size: Number(sampleSize) };
    add.mutate({ queue: queue!, body }, { onSuccess: onAdded });
  };

  return (
    <FormModal
      title={picked ? `Add ${formatCount(rootIds.length)} traces to a queue` : 'Add traces of this view to a queue'}
      onClose={onClose}
      onSubmit={submit}
      submit="Add to queue"
      pending={add.isPending}
      error={add.isError && errorMessage(add.error)}
      disabled={!!missing}
    >
      <Select
        label="Annotation queue"
        placeholder={queues.isPending ? 'Loading the queues…' : 'Choose a queue'}
        data={(queues.data ?? []).map((q) => ({ value: q.id, label: q.name }))}
        value={queueId}
        onChange={setQueueId}
        searchable
        data-autofocus
        error={queues.isError ? `The queues could not load: ${errorMessage(queues.error)}` : undefined}
      />
      {queues.data?.length === 0 && (
        <Text size="sm" c="dimmed">
          This project has no queue yet:{' '}
          <Anchor component={Link} to={`/projects/${projectUuid}/annotation-queues`}>
            create one
          </Anchor>{' '}
          with the criteria reviewers fill in.
        </Text>
      )}
      {picked ? (
        <Text size="sm">
          The {rootIds.length === 1 ? 'trace' : `${formatCount(rootIds.length)} traces`} selected in the table. A trace
          already in the queue is not added again.
        </Text>
      ) : searching ? (
        <Text size="sm" c="orange" role="status">
          A sample is drawn by filters, and a search is not one: clear the search and use a filter, or select the traces
          to add in the table.
        </Text>
      ) : (
        <>
          <div>
            <Text size="sm">
              A random sample of the traces{' '}
              {matching === null ? 'in this view' : `in this view (${formatCount(matching)})`}
              {conditions.length ? ', those that pass:' : ': every trace of the project.'}
            </Text>
            {conditions.length > 0 && (
              <List size="sm" mt={4}>
                {conditions.map((c) => (
                  <List.Item key={c.field}>{describeFilter(c)}</List.Item>
                ))}
              </List>
            )}
          </div>
          <SampleSizeInput value={sampleSize} onChange={setSampleSize} />
        </>
      )}
      {missing && (
        <Text size="xs" c="dimmed" ta="right">
          To add: {missing}.
        </Text>
      )}
    </FormModal>
  );
}
