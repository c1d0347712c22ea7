import { Badge, Button, CloseButton, Group, Popover, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconFilter } from '@tabler/icons-react';
import { useState } from 'react';
import {
  ANNOTATION_TYPES,
  composeField,
  describeFilter,
  FILTER_FIELDS,
  incomplete,
  needsKey,
  needsValue,
  OPERATOR_LABELS,
  operatorsFor,
  parseField,
  valuePlaceholder,
  type FieldParts,
  type FilterCondition,
} from '../lib/filter-fields';

const FIELD_GROUPS = [...new Set(FILTER_FIELDS.map((f) => f.group))].map((group) => ({
  group,
  items: FILTER_FIELDS.filter((f) => f.group === group).map((f) => ({ value: f.value, label: f.label })),
}));

const EMPTY: FilterCondition = { field: 'trace_name', operator: 'like', value: '' };

/**
 * One condition of get_trace_logs' filter (the API takes one): any field, the operators that field takes,
 * `metadata` and the other maps with a key, a score by name, an annotation by type and criterion id.
 */
export function FilterBuilder({
  value,
  onChange,
}: {
  value: FilterCondition | null;
  onChange: (c: FilterCondition | null) => void;
}) {
  const [opened, setOpened] = useState(false);
  const [draft, setDraft] = useState<FilterCondition>(value ?? EMPTY);
  const missing = incomplete(draft);

  const open = () => {
    setDraft(value ?? EMPTY);
    setOpened(true);
  };
  const apply = () => {
    onChange({
      field: draft.field,
      operator: draft.operator,
      ...(needsKey(parseField(draft.field)) && { key: draft.key }),
      ...(needsValue(draft.operator) && { value: draft.value }),
    });
    setOpened(false);
  };

  return (
    <Group gap={6} wrap="nowrap">
      <Popover opened={opened} onChange={setOpened} position="bottom-start" width={380} shadow="md" trapFocus withArrow>
        <Popover.Target>
          <Button
            variant="default"
            leftSection={<IconFilter size={16} />}
            onClick={() => (opened ? setOpened(false) : open())}
            aria-expanded={opened}
          >
            Filter
          </Button>
        </Popover.Target>
        <Popover.Dropdown>
          <Stack
            gap="sm"
            component="form"
            onSubmit={(e) => {
              e.preventDefault();
              if (!missing) apply();
            }}
            aria-label="Filter builder"
          >
            <FilterConditionFields condition={draft} onChange={setDraft} />
            <Group justify="space-between">
              <Text size="xs" c="dimmed">
                {missing ? `To apply: ${missing}.` : ' '}
              </Text>
              <Group gap="xs">
                {value && (
                  <Button
                    variant="subtle"
                    color="gray"
                    onClick={() => {
                      onChange(null);
                      setOpened(false);
                    }}
                  >
                    Clear
                  </Button>
                )}
                <Button type="submit" disabled={!!missing}>
                  Apply
                </Button>
              </Group>
            </Group>
          </Stack>
        </Popover.Dropdown>
      </Popover>
      {value && (
        <Badge
          size="lg"
          variant="light"
          radius="sm"
          tt="none"
          fw={500}
          maw={360}
          rightSection={<CloseButton size="xs" aria-label="Remove the filter" onClick={() => onChange(null)} />}
        >
          <Text span size="sm" truncate title={describeFilter(value)}>
            {describeFilter(value)}
          </Text>
        </Badge>
      )}
    </Group>
  );
}

/**
 * The inputs of one condition: the field (a score by name, an annotation by attribute and criterion id), the
 * key of a map field, the operators that field takes, the value. The caller lays them out: stacked in the
 * traces' filter popover, in a grid in an evaluation rule's filter rows.
 */
export function FilterConditionFields({
  condition: c,
  onChange,
  errors = {},
}: {
  condition: FilterCondition;
  onChange: (c: FilterCondition) => void;
  /** The API's refusal of a part of the condition, shown beside its input. */
  errors?: Partial<Record<'field' | 'key' | 'operator' | 'value', string>>;
}) {
  const parts = parseField(c.field);
  // A field of another kind may not take the operator chosen, nor a key: both are reset with it.
  const setParts = (next: FieldParts) => {
    const ops = operatorsFor(next);
    onChange({
      ...c,
      field: composeField(next),
      operator: ops.includes(c.operator) ? c.operator : ops[0]!,
      key: needsKey(next) ? c.key : undefined,
    });
  };
  return (
    <>
      <Select
        label="Field"
        data={FIELD_GROUPS}
        value={parts.base}
        allowDeselect={false}
        searchable
        comboboxProps={{ withinPortal: false }}
        onChange={(base) => base && setParts({ base, scoreName: '', annotationType: 'score', annotationId: '' })}
        error={errors.field}
      />
      {parts.base === 'score' && (
        <TextInput
          label="Score name"
          placeholder="accuracy"
          value={parts.scoreName ?? ''}
          onChange={(e) => setParts({ ...parts, scoreName: e.currentTarget.value })}
        />
      )}
      {parts.base === 'annotation' && (
        <Group grow align="flex-start">
          <Select
            label="Annotation attribute"
            data={ANNOTATION_TYPES.map(({ value, label }) => ({ value, label }))}
            value={parts.annotationType ?? 'score'}
            allowDeselect={false}
            comboboxProps={{ withinPortal: false }}
            onChange={(t) => t && setParts({ ...parts, annotationType: t })}
          />
          <TextInput
            label="Criterion id"
            placeholder="1"
            value={parts.annotationId ?? ''}
            onChange={(e) => setParts({ ...parts, annotationId: e.currentTarget.value })}
          />
        </Group>
      )}
      {needsKey(parts) && (
        <TextInput
          label="Key"
          placeholder="environment"
          value={c.key ?? ''}
          onChange={(e) => onChange({ ...c, key: e.currentTarget.value })}
          error={errors.key}
        />
      )}
      <Select
        label="Operator"
        data={operatorsFor(parts).map((o) => ({ value: o, label: OPERATOR_LABELS[o] }))}
        value={c.operator}
        allowDeselect={false}
        comboboxProps={{ withinPortal: false }}
        onChange={(o) => o && onChange({ ...c, operator: o as FilterCondition['operator'] })}
        error={errors.operator}
      />
      {needsValue(c.operator) && (
        <TextInput
          label="Value"
          placeholder={valuePlaceholder(c)}
          value={c.value ?? ''}
          description={
            c.operator === 'in'
              ? 'Comma-separated values'
              : c.operator === 'between'
                ? 'Two comma-separated bounds'
                : undefined
          }
          onChange={(e) => onChange({ ...c, value: e.currentTarget.value })}
          error={errors.value}
        />
      )}
    </>
  );
}
