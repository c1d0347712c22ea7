import { Button, Fieldset, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { IconPlus, IconTrash } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import { NEW_FILTER, type FilterCondition } from '../lib/filter-fields';
import { FilterConditionFields } from './FilterBuilder';

/**
 * A list of filter conditions that must all hold (an eval rule's, a sample for a queue), each with its
 * inputs and a remove button, and the API's refusals (`filters.1.value`) beside the input they name.
 */
export function FilterList({
  filters,
  onChange,
  errors,
  description,
}: {
  filters: FilterCondition[];
  onChange: (filters: FilterCondition[]) => void;
  /** The form's refusals by field path (lib/field-errors). */
  errors: Record<string, string>;
  description: ReactNode;
}) {
  const set = (i: number, c: FilterCondition) => onChange(filters.map((f, j) => (j === i ? c : f)));
  return (
    <Fieldset legend="Filters" variant="unstyled">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {description}
        </Text>
        {filters.map((c, i) => (
          <Fieldset key={i} legend={`Filter ${i + 1}`} p="sm">
            <SimpleGrid cols={2} spacing="xs" verticalSpacing="xs">
              <FilterConditionFields
                condition={c}
                onChange={(next) => set(i, next)}
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
                onClick={() => onChange(filters.filter((_, j) => j !== i))}
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
            onClick={() => onChange([...filters, NEW_FILTER])}
          >
            Add filter
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}
