import { Badge, Button, CloseButton, Group, Popover, Stack, Text, UnstyledButton } from '@mantine/core';
import { IconFilterPlus } from '@tabler/icons-react';
import { useState, type ReactNode } from 'react';
import { describeFilter, filterOf, incomplete, NEW_FILTER, type FilterCondition } from '../lib/filter-fields';
import { TIME_RANGE_LABELS, type TraceView } from '../lib/trace-view';
import { FilterConditionFields } from './FilterBuilder';

/**
 * The conditions of a view of traces: the traces page's, or those of a page that counts the same traces (the
 * dashboard, which has its filters and experiment runs, and a time range of its own).
 */
type Narrowing = Pick<TraceView, 'filters' | 'experiments'> & Partial<Pick<TraceView, 'search' | 'range' | 'status'>>;
/** A chip: what it says, the change that removes it, and for a filter, its place in the list (to edit it). */
type Chip = { label: string; remove: Partial<Narrowing>; filter?: { index: number; condition: FilterCondition } };

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
      filter: { index: i, condition: f },
    }),
  );
  if (view.experiments) chips.push({ label: 'experiment runs included', remove: { experiments: false } });
  return chips;
}

/**
 * The view's conditions, all of which must hold: the search, the time range, the status, each filter and
 * experiment runs, each a chip with a button that removes it; a filter's chip opens it for editing in place
 * (Escape leaves it as it was). And a button that adds a filter.
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
      <FilterEditor
        initial={NEW_FILTER}
        title="New filter"
        submit="Add"
        onSave={(c) => change({ filters: [...view.filters, c] })}
        target={(toggle, opened) => (
          <Button variant="default" leftSection={<IconFilterPlus size={16} />} aria-expanded={opened} onClick={toggle}>
            Add filter
          </Button>
        )}
      />
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
              {chip.filter ? (
                <EditableLabel
                  chip={{ label: chip.label, ...chip.filter }}
                  onSave={(index, c) => change({ filters: view.filters.map((f, j) => (j === index ? c : f)) })}
                />
              ) : (
                <ChipLabel label={chip.label} />
              )}
            </Badge>
          ))}
        </Group>
      )}
    </Group>
  );
}

const ChipLabel = ({ label }: { label: string }) => (
  <Text span size="sm" truncate title={label}>
    {label}
  </Text>
);

/** A filter chip's text, a button that opens the filter in the editor; a save puts it back in its place. */
function EditableLabel({
  chip,
  onSave,
}: {
  chip: { label: string; index: number; condition: FilterCondition };
  onSave: (index: number, c: FilterCondition) => void;
}) {
  return (
    <FilterEditor
      initial={chip.condition}
      title="Edit filter"
      submit="Save"
      onSave={(c) => onSave(chip.index, c)}
      target={(toggle, opened) => (
        <UnstyledButton
          aria-label={`Edit filter: ${chip.label}`}
          aria-haspopup="dialog"
          aria-expanded={opened}
          onClick={toggle}
          maw="100%"
          style={{ display: 'block', color: 'inherit' }}
        >
          <ChipLabel label={chip.label} />
        </UnstyledButton>
      )}
    />
  );
}

/**
 * A popover that writes one filter, from `initial` each time it opens: a new one, or one to edit. Escape or
 * a click outside closes it without a change, and focus goes back to what opened it.
 */
function FilterEditor({
  initial,
  title,
  submit,
  onSave,
  target,
}: {
  initial: FilterCondition;
  /** The form's accessible name. */
  title: string;
  submit: string;
  onSave: (c: FilterCondition) => void;
  target: (toggle: () => void, opened: boolean) => ReactNode;
}) {
  const [opened, setOpened] = useState(false);
  const [draft, setDraft] = useState<FilterCondition>(initial);
  const missing = incomplete(draft);
  const toggle = () => {
    setDraft(initial);
    setOpened((o) => !o);
  };
  return (
    <Popover
      opened={opened}
      onChange={setOpened}
      position="bottom-start"
      width={380}
      shadow="md"
      trapFocus
      returnFocus
      withArrow
    >
      <Popover.Target>{target(toggle, opened)}</Popover.Target>
      <Popover.Dropdown>
        <Stack
          gap="sm"
          component="form"
          aria-label={title}
          onSubmit={(e) => {
            e.preventDefault();
            if (missing) return;
            onSave(filterOf(draft));
            setOpened(false);
          }}
        >
          <FilterConditionFields condition={draft} onChange={setDraft} />
          <Group justify="space-between" wrap="nowrap">
            <Text size="xs" c="dimmed">
              {missing ? `To ${submit.toLowerCase()}: ${missing}.` : 'Every filter must hold.'}
            </Text>
            <Button type="submit" disabled={!!missing}>
              {submit}
            </Button>
          </Group>
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
