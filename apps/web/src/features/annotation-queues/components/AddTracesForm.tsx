import {
  Button,
  Fieldset,
  Group,
  NumberInput,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import { useState } from 'react';
import { FilterConditionFields } from '../../../components/FilterBuilder';
import { FormModal } from '../../../components/ui/FormModal';
import { incomplete, type FilterCondition } from '../../../lib/filter-fields';
import { formatCount } from '../../../lib/format';
import { useAddItems, type AnnotationQueue, type QueueItemsRequest } from '../api';
import { fieldErrors, filterOf, listErrors, NEW_FILTER, otherErrors, traceIdsOf } from '../lib/queues';

const PLACED = /^(filters|sample_size|trace_ids)(\.|$)/;
const MAX_SAMPLE = 10_000;

/**
 * Adds traces to a queue: a random sample of the project's traces that pass every filter, or traces by id.
 * A trace already in the queue is not added again.
 */
export function AddTracesForm({ queue, onClose }: { queue: AnnotationQueue; onClose: () => void }) {
  const [mode, setMode] = useState<'filter' | 'ids'>('filter');
  const [filters, setFilters] = useState<FilterCondition[]>([]);
  const [sampleSize, setSampleSize] = useState<number | string>(50);
  const [ids, setIds] = useState('');
  const add = useAddItems();
  const errors = fieldErrors(add.error);
  const traceIds = traceIdsOf(ids);
  const setFilter = (i: number, c: FilterCondition) => setFilters(filters.map((f, j) => (j === i ? c : f)));

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
    add.mutate(
      { id: queue.id, body },
      {
        onSuccess: ({ added }) => {
          notifications.show({
            color: 'teal',
            message: added
              ? `Added ${formatCount(added)} ${added === 1 ? 'trace' : 'traces'} to ${queue.name}`
              : `No trace added to ${queue.name}: the matching traces are in it already`,
          });
          onClose();
        },
      },
    );
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
          <Fieldset legend="Filters" variant="unstyled">
            <Stack gap="sm">
              <Text size="sm" c="dimmed">
                A sample of the project&apos;s traces whose root span passes every filter; without a filter, of all of
                them.
              </Text>
              {filters.map((c, i) => (
                <Fieldset key={i} legend={`Filter ${i + 1}`} p="sm">
                  <SimpleGrid cols={2} spacing="xs" verticalSpacing="xs">
                    <FilterConditionFields
                      condition={c}
                      onChange={(next) => setFilter(i, next)}
                      errors={{
                        field: errors[`filters.${i}.field`],
                        key: errors[`filters.${i}.key`],
                        operator: errors[`filters.${i}.operator`],
                        value: errors[`filters.${i}.value`] ?? errors[`filters.${i}`],
                      }}
                    />
                  </SimpleGrid>
                  <Group justify="flex-end" mt="xs">
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      leftSection={<IconTrash size={14} />}
                      onClick={() => setFilters(filters.filter((_, j) => j !== i))}
                    >
                      Remove filter {i + 1}
                    </Button>
                  </Group>
                </Fieldset>
              ))}
              {errors.filters && (
                <Text size="sm" c="red">
                  {errors.filters}
                </Text>
              )}
              <Group>
                <Button
                  size="xs"
                  variant="default"
                  leftSection={<IconPlus size={14} />}
                  onClick={() => setFilters([...filters, NEW_FILTER])}
                >
                  Add filter
                </Button>
              </Group>
            </Stack>
          </Fieldset>
          <NumberInput
            label="Sample size"
            description={`Traces to add, at random among those that match (at most ${formatCount(MAX_SAMPLE)})`}
            min={1}
            max={MAX_SAMPLE}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="strict"
            value={sampleSize}
            onChange={setSampleSize}
            error={errors.sample_size}
            maw={260}
          />
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
