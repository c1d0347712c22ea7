import { Group, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { errorMessage } from '../../../api/client';
import type { EvalRule } from '../../../api/types';
import { FormModal } from '../../../components/ui/FormModal';
import { useStartBackfill } from '../api';
import { fieldErrors } from '../../../lib/field-errors';
import { fromLocalInput, toLocalInput } from '../lib/rules';

const DAY_MS = 86_400_000;

/** Runs a rule over stored traces of a time range: the last 24 hours unless changed. */
export function BackfillForm({ rule, onClose }: { rule: EvalRule; onClose: () => void }) {
  const [range, setRange] = useState(() => {
    // To the next minute, so that the traces of the minute running are in the range.
    const to = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
    return { from: toLocalInput(new Date(to.getTime() - DAY_MS)), to: toLocalInput(to) };
  });
  const start = useStartBackfill();
  const from = fromLocalInput(range.from);
  const to = fromLocalInput(range.to);
  const errors = fieldErrors(start.error);
  const order = from && to && from >= to ? 'The end must be after the start.' : undefined;
  const placed = errors.from || errors.to;
  return (
    <FormModal
      title={`Backfill the rule ${rule.name}`}
      onClose={onClose}
      onSubmit={() => from && to && start.mutate({ id: rule.id, from, to }, { onSuccess: onClose })}
      submit="Start backfill"
      pending={start.isPending}
      error={start.isError && !placed && errorMessage(start.error)}
      disabled={!from || !to || !!order}
    >
      <Text size="sm" c="dimmed">
        The rule runs over the stored traces that started in this range, newest first, whether it is enabled or not: its
        filters and sample rate apply, and its judges are called and costed as for new traces. Its progress shows in the
        list.
      </Text>
      <Group grow align="flex-start">
        <TextInput
          type="datetime-local"
          label="From"
          description="Your time zone"
          required
          value={range.from}
          onChange={(e) => setRange({ ...range, from: e.currentTarget.value })}
          error={errors.from ?? (range.from && !from ? 'Not a time' : undefined)}
          data-autofocus
        />
        <TextInput
          type="datetime-local"
          label="To"
          description="Not included"
          required
          value={range.to}
          onChange={(e) => setRange({ ...range, to: e.currentTarget.value })}
          error={errors.to ?? order ?? (range.to && !to ? 'Not a time' : undefined)}
        />
      </Group>
    </FormModal>
  );
}
