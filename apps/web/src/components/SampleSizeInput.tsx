import { NumberInput } from '@mantine/core';
import { MAX_SAMPLE } from '../api/annotation-queues';
import { formatCount } from '../lib/format';

/** How many traces a random sample adds to an annotation queue ('' while cleared). */
export function SampleSizeInput({
  value,
  onChange,
  error,
}: {
  value: number | string;
  onChange: (value: number | string) => void;
  error?: string;
}) {
  return (
    <NumberInput
      label="Sample size"
      description={`Traces to add, at random among those that match (at most ${formatCount(MAX_SAMPLE)}); one already in the queue is not added again`}
      min={1}
      max={MAX_SAMPLE}
      allowDecimal={false}
      allowNegative={false}
      clampBehavior="strict"
      value={value}
      onChange={onChange}
      error={error}
      maw={300}
    />
  );
}
