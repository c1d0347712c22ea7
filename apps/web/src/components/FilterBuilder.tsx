import { Badge, Button, CloseButton, Group, Popover, Select, Stack, Text, TextInput } from '@mantine/core';
import { IconFilter } from '@tabler/icons-react';
import { useState } from 'react';
import {
  ANNOTATION_TYPES,
  composeField,
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

/** The filter as one line of text, for the applied-filter chip. */
function describeFilter(c: FilterCondition): string {
  const parts = parseField(c.field);
  const label =
    parts.base === 'score'
      ? `score "${parts.scoreName}"`
      : parts.base === 'annotation'
        ? `annotation ${parts.annotationId} ${ANNOTATION_TYPES.find((t) => t.value === parts.annotationType)?.label ?? parts.annotationType}`
        : (FILTER_FIELDS.find((f) => f.value === parts.base)?.label ?? parts.base).toLowerCase();
  const key = c.key ? `.${c.key}` : '';
  return `${label}${key} ${OPERATOR_LABELS[c.operator]}${needsValue(c.operator) ? ` ${c.value ?? ''}` : ''}`;
}

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
  const parts = parseField(draft.field);
  const operators = operatorsFor(parts);
  const missing = incomplete(draft);

  const open = () => {
    setDraft(value ?? EMPTY);
    setOpened(true);
  };
  const setParts = (next: FieldParts) => {
    const ops = operatorsFor(next);
    setDraft((d) => ({
      ...d,
      field: composeField(next),
      operator: ops.includes(d.operator) ? d.operator : ops[0]!,
      key: needsKey(next) ? d.key : undefined,
    }));
  };
  const apply = () => {
    onChange({
      field: draft.field,
      operator: draft.operator,
      ...(needsKey(parts) && { key: draft.key }),
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
            <Select
              label="Field"
              data={FIELD_GROUPS}
              value={parts.base}
              allowDeselect={false}
              searchable
              comboboxProps={{ withinPortal: false }}
              onChange={(base) => base && setParts({ base, scoreName: '', annotationType: 'score', annotationId: '' })}
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
              <Group grow>
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
                value={draft.key ?? ''}
                onChange={(e) => {
                  const key = e.currentTarget.value;
                  setDraft((d) => ({ ...d, key }));
                }}
              />
            )}
            <Select
              label="Operator"
              data={operators.map((o) => ({ value: o, label: OPERATOR_LABELS[o] }))}
              value={draft.operator}
              allowDeselect={false}
              comboboxProps={{ withinPortal: false }}
              onChange={(o) => o && setDraft((d) => ({ ...d, operator: o as FilterCondition['operator'] }))}
            />
            {needsValue(draft.operator) && (
              <TextInput
                label="Value"
                placeholder={valuePlaceholder(draft)}
                value={draft.value ?? ''}
                description={
                  draft.operator === 'in'
                    ? 'Comma-separated values'
                    : draft.operator === 'between'
                      ? 'Two comma-separated bounds'
                      : undefined
                }
                onChange={(e) => {
                  const v = e.currentTarget.value;
                  setDraft((d) => ({ ...d, value: v }));
                }}
              />
            )}
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
