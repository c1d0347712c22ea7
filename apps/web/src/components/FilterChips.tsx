import { Badge, Button, CloseButton, Group, Popover, Stack, Text } from '@mantine/core';
import { IconFilterPlus } from '@tabler/icons-react';
import { useState } from 'react';
import { describeFilter, filterOf, incomplete, NEW_FILTER, type FilterCondition } from '../lib/filter-fields';
import { TIME_RANGE_LABELS, type TraceView } from '../lib/trace-view';
import { FilterConditionFields } from './FilterBuilder';

/**
 * The conditions of a view of traces: the traces page's, or those of a page that counts the same traces (the
 * dashboard, which has its filters and experiment runs, and a time range of its own).
 */
type Narrowing = Pick<TraceView, 'filters' | 'experiments'> & Partial<Pick<TraceView, 'search' | 'range' | 'status'>>;
type Chip = { label: string; remove: Partial<Narrowing> };

/** Every condition of the view that narrows it, each as a chip that removes it. */
function chipsOf(view: Narrowing): Chip[] {
  const chips: Chip[] = [];
  const search = view.search?.trim();
  if (search) chips.push({ label: `search "${search}"`, remove: { search: '' } });
  if (view.range && view.range !== 'na')
    chips.push({ label: TIME_RANGE_LABELS[view.range].toLowerCase(), remove: { range: 'na' } });
  if (view.status) chips.push({ label: `status ${view.status}`, remove: { status: '' } });
  view.filters.forEach((f, i) =>
    chips.push({
      label: `${describeFilter(f)}${incomplete(f) ? ` (not applied: ${incomplete(f)})` : ''}`,
      remove: { filters: view.filters.filter((_, j) => j !== i) },
    }),
  );
  if (view.experiments) chips.push({ label: 'experiment runs included', remove: { experiments: false } });
  return chips;
}

/**
 * The view's conditions, all of which must hold: the search, the time range, the status, each filter and
 * experiment runs, each a chip with a button that removes it; and a button that adds a filter.
 */
export function FilterChips<V extends Narrowing>({
  view,
  onChange,
}: {
  view: V;
  onChange: (change: Partial<V>) => void;
}) {
  const chips = chipsOf(view);
  // A chip removes only what the view has: a view without a search, a range or a status shows no such chip.
  const change = (c: Partial<Narrowing>) => onChange(c as Partial<V>);
  return (
    <Group gap={6} wrap="wrap">
      <AddFilter onAdd={(c) => change({ filters: [...view.filters, c] })} />
      {chips.length > 0 && (
        <Group gap={6} wrap="wrap" role="list" aria-label="Conditions of this view">
          {chips.map((chip, i) => (
            <Badge
              key={`${chip.label}-${i}`}
              role="listitem"
              size="lg"
              variant="light"
              radius="sm"
              tt="none"
              fw={500}
              maw={420}
              rightSection={
                <CloseButton size="xs" aria-label={`Remove ${chip.label}`} onClick={() => change(chip.remove)} />
              }
            >
              <Text span size="sm" truncate title={chip.label}>
                {chip.label}
              </Text>
            </Badge>
          ))}
        </Group>
      )}
    </Group>
  );
}

/** A popover that writes one more filter. */
function AddFilter({ onAdd }: { onAdd: (c: FilterCondition) => void }) {
  const [opened, setOpened] = useState(false);
  const [draft, setDraft] = useState<FilterCondition>(NEW_FILTER);
  const missing = incomplete(draft);
  return (
    <Popover opened={opened} onChange={setOpened} position="bottom-start" width={380} shadow="md" trapFocus withArrow>
      <Popover.Target>
        <Button
          variant="default"
          leftSection={<IconFilterPlus size={16} />}
          aria-expanded={opened}
          onClick={() => {
            setDraft(NEW_FILTER);
            setOpened((o) => !o);
          }}
        >
          Add filter
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
        <Stack
          gap="sm"
          component="form"
          aria-label="New filter"
          onSubmit={(e) => {
            e.preventDefault();
            if (missing) return;
            onAdd(filterOf(draft));
            setOpened(false);
          }}
        >
          <FilterConditionFields condition={draft} onChange={setDraft} />
          <Group justify="space-between" wrap="nowrap">
            <Text size="xs" c="dimmed">
              {missing ? `To add: ${missing}.` : 'Every filter must hold.'}
            </Text>
            <Button type="submit" disabled={!!missing}>
              Add
            </Button>
          </Group>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
