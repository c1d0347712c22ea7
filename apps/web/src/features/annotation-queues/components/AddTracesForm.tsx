import { SegmentedControl, Text, Textarea } from '@mantine/core';
import { useState } from 'react';
import type { AnnotationQueue, QueueItemsRequest } from '../../../api/annotation-queues';
import { FilterList } from '../../../components/FilterList';
import { SampleSizeInput } from '../../../components/SampleSizeInput';
import { FormModal } from '../../../components/ui/FormModal';
import { fieldErrors, listErrors, otherErrors } from '../../../lib/field-errors';
import { filterOf, incomplete, type FilterCondition } from '../../../lib/filter-fields';
import { useAddToQueue } from '../../../hooks/use-add-to-queue';
import { traceIdsOf } from '../lib/queues';

const PLACED = /^(filters|sample_size|trace_ids)(\.|$)/;

/**
 * Adds traces to a queue: a random sample of the project's traces that pass every filter, or traces by id.
 * A trace already in the queue is not added again.
 */
export function AddTracesForm({ queue, onClose }: { queue: AnnotationQueue; onClose: () => void }) {
  const [mode, setMode] = useState<'filter' | 'ids'>('filter');
  const [filters, setFilters] = useState<FilterCondition[]>([]);
  const [sampleSize, setSampleSize] = useState<number | string>(50);
  const [ids, setIds] = useState('');
  const add = useAddToQueue();
  const errors = fieldErrors(add.error);
  const traceIds = traceIdsOf(ids);

  const bad = filters.findIndex((c) => incomplete(c));
  const missing =
    mode === 'ids'
      ? traceIds.length
        ? null
        : 'give the trace ids'
      : bad >= 0
        ? `complete filter ${bad + 1} (${incomplete(filters[bad]!)})`
        : sampleSize === ''
          ? 'give the sample size'
          : null;

  const submit = () => {
    const body: QueueItemsRequest =
      mode === 'ids' ? { trace_ids: traceIds } : { filters: filters.map(filterOf), sample_size: Number(sampleSize) };
    add.mutate({ queue, body }, { onSuccess: onClose });
  };

  return (
    <FormModal
      title={`Add traces to ${queue.name}`}
      onClose={onClose}
      onSubmit={submit}
      submit="Add traces"
      pending={add.isPending}
      error={otherErrors(add.error, PLACED)}
      disabled={!!missing}
    >
      <SegmentedControl
        value={mode}
        onChange={(v) => setMode(v as typeof mode)}
        data={[
          { value: 'filter', label: 'A sample by filter' },
          { value: 'ids', label: 'By trace id' },
        ]}
        aria-label="Add traces"
      />
      {mode === 'filter' ? (
        <>
          <FilterList
            filters={filters}
            onChange={setFilters}
            errors={errors}
            description="A sample of the project's traces whose root span passes every filter; without a filter, of all of them."
          />
          <SampleSizeInput value={sampleSize} onChange={setSampleSize} error={errors.sample_size} />
        </>
      ) : (
        <Textarea
          label="Trace ids"
          description="The root trace ids, one a line (or separated by commas)"
          autosize
          minRows={4}
          maxRows={12}
          ff="monospace"
          value={ids}
          onChange={(e) => setIds(e.currentTarget.value)}
          error={listErrors(errors, 'trace_ids', (i) => traceIds[i] ?? `trace ${i + 1}`)}
        />
      )}
      {missing && (
        <Text size="xs" c="dimmed" ta="right">
          To add: {missing}.
        </Text>
      )}
    </FormModal>
  );
}
