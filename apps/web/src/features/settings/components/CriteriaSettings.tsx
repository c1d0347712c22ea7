import {
  Alert,
  Badge,
  Button,
  Group,
  Loader,
  NumberInput,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { IconChevronDown, IconChevronRight } from '@tabler/icons-react';
import { useId, useState, type FormEvent } from 'react';
import { errorMessage } from '../../../api/client';
import { useCriteria } from '../../../api/criteria';
import { useEvalMetrics } from '../../../api/eval-metrics';
import type { Criterion } from '../../../api/types';
import { CopyIcon } from '../../../components/ui/CopyField';
import { DeleteButton } from '../../../components/ui/DeleteButton';
import { ErrorState, QueryPanel } from '../../../components/ui/StateViews';
import { Timestamp } from '../../../components/ui/Timestamp';
import { useCreateCriterion, useDeleteCriterion, useSetCriterionMetric } from '../api';
import { CriterionAgreement } from '../../../components/CriterionAgreement';

const num = (v: string | number) => (typeof v === 'number' ? v : null);

function rangeOf(c: Criterion): string {
  if (c.kind === 'value') return c.options?.length ? c.options.join(', ') : 'any text';
  if (c.min == null && c.max == null) return 'any number';
  return `${c.min ?? '−∞'} to ${c.max ?? '∞'}`;
}

/** The choice of no metric: metric names are never empty. */
const NO_METRIC = { value: '', label: 'No metric' };

/**
 * The metrics to choose from: none (first, so that a keyboard can forget a metric as easily as name one),
 * the organization's metrics, and a name already chosen whose metric is gone.
 */
function metricChoices(names: string[], current: string | null) {
  return [NO_METRIC, ...(current && !names.includes(current) ? [current] : []), ...names];
}

/** Admins: what spans are annotated by, a score within a range or a value among options. */
export function CriteriaSettings() {
  const criteria = useCriteria();
  const create = useCreateCriterion();
  const remove = useDeleteCriterion();
  const metrics = useEvalMetrics();
  const metricNames = [...new Set((metrics.data ?? []).map((m) => m.name))];
  const [metric, setMetric] = useState<string | null>(null);
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
        eval_metric_name: metric,
        ...(kind === 'score' ? { min: num(min), max: num(max) } : { options: options.length ? options : null }),
      },
      {
        onSuccess: () => {
          setName('');
          setMin('');
          setMax('');
          setOptions([]);
          setDescription('');
          setMetric(null);
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
          <code>annotation:score:&lt;id&gt;</code>. Name the evaluation metric a criterion corresponds to, to see how
          far that metric (the judge) agrees with people.
        </Text>
      </div>
      {metrics.isError && (
        <ErrorState
          error={metrics.error}
          title="The evaluation metrics could not load"
          onRetry={() => metrics.refetch()}
        />
      )}
      <QueryPanel query={criteria} loading="Loading the criteria" empty="No criteria yet: create one below.">
        {(rows) => (
          <Table verticalSpacing="sm" horizontalSpacing="md" aria-label="Annotation criteria">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Kind</Table.Th>
                <Table.Th>Range or options</Table.Th>
                <Table.Th>Description</Table.Th>
                <Table.Th>Evaluation metric</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((c) => (
                <CriterionRow
                  key={c.id}
                  criterion={c}
                  metricNames={metricNames}
                  metricsLoading={metrics.isPending}
                  onDelete={() => remove.mutateAsync(c.id)}
                />
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
          <Group align="flex-start" wrap="wrap">
            <TextInput
              label="Description (optional)"
              placeholder="What a high score means"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              style={{ flex: 1, minWidth: 260 }}
            />
            <Select
              label="Evaluation metric it corresponds to (optional)"
              description={
                kind === 'value' && metric
                  ? "The metric's scores are read as the options, lowest to highest, in the order given"
                  : 'Its scores are then compared with the annotations'
              }
              rightSection={metrics.isPending ? <Loader size={12} aria-label="Loading the metrics" /> : undefined}
              data={metricChoices(metricNames, metric)}
              value={metric ?? ''}
              onChange={(v) => setMetric(v || null)}
              allowDeselect={false}
              searchable
              nothingFoundMessage="No metric by that name"
              w={320}
            />
          </Group>
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

/** A criterion, its metric (chosen or forgotten here) and, when it has one, its agreement below it. */
function CriterionRow({
  criterion: c,
  metricNames,
  metricsLoading,
  onDelete,
}: {
  criterion: Criterion;
  metricNames: string[];
  metricsLoading: boolean;
  onDelete: () => Promise<unknown>;
}) {
  const setMetric = useSetCriterionMetric();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const shown = setMetric.isPending ? setMetric.variables.eval_metric_name : c.eval_metric_name;
  const choose = (name: string | null) => {
    if (name === c.eval_metric_name) return;
    setMetric.mutate(
      { id: c.id, eval_metric_name: name },
      {
        onSuccess: () =>
          notifications.show({
            color: 'teal',
            message: name ? `${c.name} now corresponds to the metric ${name}` : `${c.name} names no metric now`,
          }),
      },
    );
  };
  return (
    <>
      <Table.Tr>
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
          <Stack gap={4} align="flex-start">
            <Select
              size="xs"
              w={200}
              aria-label={`Evaluation metric of ${c.name}`}
              rightSection={metricsLoading ? <Loader size={12} aria-label="Loading the metrics" /> : undefined}
              data={metricChoices(metricNames, shown)}
              value={shown ?? ''}
              onChange={(v) => choose(v || null)}
              allowDeselect={false}
              searchable
              nothingFoundMessage="No metric by that name"
              disabled={setMetric.isPending}
              error={setMetric.isError ? errorMessage(setMetric.error) : undefined}
            />
            {c.eval_metric_name && (
              <Button
                size="compact-xs"
                variant="subtle"
                leftSection={open ? <IconChevronDown size={14} /> : <IconChevronRight size={14} />}
                aria-expanded={open}
                aria-controls={open ? panelId : undefined}
                aria-label={`Agreement of ${c.name}`}
                onClick={() => setOpen((o) => !o)}
              >
                Agreement
              </Button>
            )}
          </Stack>
        </Table.Td>
        <Table.Td>
          <Timestamp value={c.created_at} size="sm" />
        </Table.Td>
        <Table.Td ta="right">
          <DeleteButton
            label={`Delete the criterion ${c.name}`}
            question={`Delete the criterion ${c.name}? Annotations made by it stay on their spans.`}
            onDelete={onDelete}
          />
        </Table.Td>
      </Table.Tr>
      {c.eval_metric_name && open && (
        <Table.Tr>
          <Table.Td colSpan={7} id={panelId} bg="var(--mantine-color-default-hover)">
            <CriterionAgreement criterion={c} />
          </Table.Td>
        </Table.Tr>
      )}
    </>
  );
}
