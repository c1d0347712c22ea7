import {
  Alert,
  Badge,
  Button,
  Group,
  NumberInput,
  Paper,
  SegmentedControl,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState, type FormEvent } from 'react';
import { errorMessage } from '../../../api/client';
import { useCriteria } from '../../../api/criteria';
import type { Criterion } from '../../../api/types';
import { CopyIcon } from '../../../components/ui/CopyField';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { QueryPanel } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { useCreateCriterion, useDeleteCriterion } from '../api';

const num = (v: string | number) => (typeof v === 'number' ? v : null);

function rangeOf(c: Criterion): string {
  if (c.kind === 'value') return c.options?.length ? c.options.join(', ') : 'any text';
  if (c.min == null && c.max == null) return 'any number';
  return `${c.min ?? '−∞'} to ${c.max ?? '∞'}`;
}

/** Admins: what spans are annotated by, a score within a range or a value among options. */
export function CriteriaSettings() {
  const criteria = useCriteria();
  const create = useCreateCriterion();
  const remove = useDeleteCriterion();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'score' | 'value'>('score');
  const [min, setMin] = useState<string | number>('');
  const [max, setMax] = useState<string | number>('');
  const [options, setOptions] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate(
      {
        name: name.trim(),
        kind,
        description: description.trim() || null,
        ...(kind === 'score' ? { min: num(min), max: num(max) } : { options: options.length ? options : null }),
      },
      {
        onSuccess: () => {
          setName('');
          setMin('');
          setMax('');
          setOptions([]);
          setDescription('');
          notifications.show({ color: 'teal', message: 'Criterion created' });
        },
      },
    );
  };
  return (
    <Stack gap="sm">
      <div>
        <Title order={3}>Annotation criteria</Title>
        <Text size="sm" c="dimmed">
          What people annotate spans by in the trace view: a score, or a value. Filter traces on them with{' '}
          <code>annotation:score:&lt;id&gt;</code>.
        </Text>
      </div>
      <QueryPanel query={criteria} loading="Loading the criteria" empty="No criteria yet: create one below.">
        {(rows) => (
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Annotation criteria">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Range or options</Table.Th>
                <Table.Th>Description</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {c.name}
                    </Text>
                    <Group gap={2} wrap="nowrap">
                      <Text size="xs" c="dimmed" ff="monospace">
                        {c.id}
                      </Text>
                      <CopyIcon value={c.id} label={`Copy the id of ${c.name}`} />
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light" color={c.kind === 'score' ? 'blue' : 'grape'} radius="sm">
                      {c.kind}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{rangeOf(c)}</Table.Td>
                  <Table.Td>
                    <Text size="sm" c={c.description ? undefined : 'dimmed'}>
                      {c.description ?? '–'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Timestamp value={c.created_at} size="sm" />
                  </Table.Td>
                  <Table.Td ta="right">
                    <DeleteButton
                      label={`Delete the criterion ${c.name}`}
                      question={`Delete the criterion ${c.name}? Annotations made by it stay on their spans.`}
                      onDelete={() => remove.mutateAsync(c.id)}
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryPanel>
      <Paper withBorder radius="md" p="md" component="form" onSubmit={submit} aria-label="Create a criterion">
        <Stack gap="sm">
          <Text fw={600} size="sm">
            Create a criterion
          </Text>
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label="Name"
              placeholder="helpfulness"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              required
              w={220}
            />
            <div>
              <Text size="sm" fw={500} mb={2}>
                Kind
              </Text>
              <SegmentedControl
                aria-label="Kind"
                value={kind}
                onChange={(v) => setKind(v as 'score' | 'value')}
                data={[
                  { value: 'score', label: 'Score' },
                  { value: 'value', label: 'Value' },
                ]}
              />
            </div>
            {kind === 'score' ? (
              <>
                <NumberInput label="Min" value={min} onChange={setMin} w={110} />
                <NumberInput label="Max" value={max} onChange={setMax} w={110} />
              </>
            ) : (
              <TagsInput
                label="Options"
                placeholder="Type one, then Enter"
                value={options}
                onChange={setOptions}
                w={320}
              />
            )}
          </Group>
          <TextInput
            label="Description (optional)"
            placeholder="What a high score means"
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          {create.isError && (
            <Alert color="red" variant="light">
              {errorMessage(create.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
              Create criterion
            </Button>
          </Group>
        </Stack>
      </Paper>
    </Stack>
  );
}
