import {
  Alert,
  Badge,
  Button,
  Grid,
  Group,
  JsonInput,
  Paper,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { ApiError, errorMessage } from '../../api/client';
import { useEvalMetrics } from '../../api/eval-metrics';
import { usePermissions } from '../../api/roles';
import type { EvalMetricCreate } from '../../api/types';
import { DeleteButton } from '../../components/ui/DeleteButton';
import { QueryPanel } from '../../components/ui/StateViews';
import { Timestamp } from '../../components/ui/Timestamp';
import { formatScore } from '../../lib/format';
import { useCreateEvalMetric, useDeleteEvalMetric, useTryEvalMetric } from './api';

const TYPES: { value: EvalMetricCreate['type']; label: string; help: string }[] = [
  { value: 'exact_match', label: 'Exact match', help: '1 when the output equals the target (trimmed), else 0.' },
  { value: 'contains', label: 'Contains', help: '1 when the output contains the value (or the target), else 0.' },
  { value: 'regex_match', label: 'Regex match', help: '1 when the output matches the pattern, else 0.' },
  { value: 'levenshtein', label: 'Levenshtein', help: '1 minus the edit distance over the longer length.' },
  { value: 'json_valid', label: 'Valid JSON', help: '1 when the output parses as JSON, else 0.' },
  { value: 'json_schema', label: 'JSON schema', help: '1 when the output is JSON that the schema accepts.' },
  { value: 'llm_judge', label: 'LLM judge', help: 'A model scores the output from a prompt you write.' },
];

/** The organization's evaluation metrics: spans name them in `evaluation_metric_names` to be scored. */
export default function EvalMetricsPage() {
  const metrics = useEvalMetrics();
  const remove = useDeleteEvalMetric();
  const { canWrite } = usePermissions();
  return (
    <Stack gap="md">
      <Title order={2}>Evaluation metrics</Title>
      <Grid>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <QueryPanel query={metrics} loading="Loading the metrics" empty="No metrics yet: create one with the form.">
            {(rows) => (
              <Table aria-label="Evaluation metrics" verticalSpacing="sm" horizontalSpacing="md">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Type</Table.Th>
                    <Table.Th>Created</Table.Th>
                    {canWrite && <Table.Th />}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((m) => (
                    <Table.Tr key={m.id}>
                      <Table.Td fw={500}>{m.name}</Table.Td>
                      <Table.Td>
                        <Badge variant="light" tt="none">
                          {TYPES.find((t) => t.value === m.type)?.label ?? m.type}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Timestamp value={m.created_at} size="sm" />
                      </Table.Td>
                      {canWrite && (
                        <Table.Td ta="right">
                          <DeleteButton
                            label={`Delete the metric ${m.name}`}
                            question={`Delete the metric "${m.name}"? Spans that name it will no longer be scored by it.`}
                            onDelete={() => remove.mutateAsync(m.id)}
                          />
                        </Table.Td>
                      )}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
          </QueryPanel>
        </Grid.Col>
        {canWrite && (
          <Grid.Col span={{ base: 12, lg: 6 }}>
            <MetricForm />
          </Grid.Col>
        )}
      </Grid>
    </Stack>
  );
}

type Draft = {
  name: string;
  type: EvalMetricCreate['type'];
  caseSensitive: boolean;
  value: string;
  pattern: string;
  flags: string;
  schema: string;
  judge: { prompt_template: string; provider: string; model: string };
};

const EMPTY: Draft = {
  name: '',
  type: 'exact_match',
  caseSensitive: true,
  value: '',
  pattern: '',
  flags: '',
  schema: '{\n  "type": "object"\n}',
  judge: {
    prompt_template:
      'How well does this answer the question, from 0 to 1?\nQuestion: {{inputs.question}}\nAnswer: {{output}}\nReply as {"score": x, "reason": "..."}.',
    provider: 'openai',
    model: 'gpt-4o-mini',
  },
};

/** The metric the form describes, as POST /eval-metrics takes it; a schema that is not JSON is sent as null. */
function metricOf(d: Draft): EvalMetricCreate {
  const name = d.name.trim();
  switch (d.type) {
    case 'exact_match':
      return { name, type: d.type, config: { case_sensitive: d.caseSensitive } };
    case 'contains':
      return { name, type: d.type, config: { value: d.value || null, case_sensitive: d.caseSensitive } };
    case 'regex_match':
      return { name, type: d.type, config: { pattern: d.pattern, flags: d.flags || null } };
    case 'json_schema':
      return { name, type: d.type, config: { schema: parseJson(d.schema) as Record<string, unknown> } };
    case 'llm_judge':
      return { name, type: d.type, config: d.judge };
    default:
      return { name, type: d.type, config: {} };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The API's 422 problems by field (the part of `loc` after `config`), for the form to show beside each. */
function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError) || !Array.isArray(err.detail)) return {};
  const out: Record<string, string> = {};
  for (const d of err.detail as { loc?: (string | number)[]; msg?: string }[]) {
    const loc = (d.loc ?? []).filter((l) => l !== 'body' && l !== 'metric');
    out[String(loc.at(-1) ?? '')] = d.msg ?? '';
  }
  return out;
}

function MetricForm() {
  const [d, setD] = useState<Draft>(EMPTY);
  const [sample, setSample] = useState({ output: '', target: '' });
  const create = useCreateEvalMetric();
  const tryIt = useTryEvalMetric();
  const set = (change: Partial<Draft>) => setD({ ...d, ...change });
  const errors = { ...fieldErrors(tryIt.error), ...fieldErrors(create.error) };
  const type = TYPES.find((t) => t.value === d.type)!;
  const result = tryIt.data;
  return (
    <Paper withBorder radius="md" p="md">
      <Stack
        gap="sm"
        component="form"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate(metricOf(d), { onSuccess: () => setD(EMPTY) });
        }}
      >
        <Text fw={600}>New metric</Text>
        <Group grow align="flex-start">
          <TextInput
            label="Name"
            required
            value={d.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={errors.name}
          />
          <Select
            label="Type"
            data={TYPES.map(({ value, label }) => ({ value, label }))}
            value={d.type}
            onChange={(v) => v && set({ type: v as Draft['type'] })}
            allowDeselect={false}
          />
        </Group>
        <Text size="sm" c="dimmed">
          {type.help}
        </Text>
        <TypeFields d={d} set={set} errors={errors} />
        <Paper withBorder radius="md" p="sm" bg="var(--mantine-color-default-hover)">
          <Stack gap="xs">
            <Text size="sm" fw={600}>
              Try it
            </Text>
            <Textarea
              label="Output"
              autosize
              minRows={2}
              value={sample.output}
              onChange={(e) => setSample({ ...sample, output: e.currentTarget.value })}
            />
            <Textarea
              label="Target"
              autosize
              minRows={1}
              value={sample.target}
              onChange={(e) => setSample({ ...sample, target: e.currentTarget.value })}
            />
            <Group>
              <Button
                variant="light"
                onClick={() =>
                  tryIt.mutate({
                    metric: { ...metricOf(d), name: d.name.trim() || 'try' },
                    output: sample.output,
                    target: sample.target || null,
                  })
                }
                loading={tryIt.isPending}
              >
                Try
              </Button>
              <Text size="sm" role="status">
                {d.type === 'llm_judge' && !result
                  ? 'A judge is called through the gateway: the try is logged and costed like any completion.'
                  : result && 'score' in result
                    ? `Score ${formatScore(result.score)}${result.reason ? `: ${result.reason}` : ''}`
                    : result && 'error' in result
                      ? `No score: ${result.error}`
                      : ''}
              </Text>
            </Group>
          </Stack>
        </Paper>
        {(create.isError || tryIt.isError) && !Object.keys(errors).length && (
          <Alert color="red">{errorMessage(create.error ?? tryIt.error)}</Alert>
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={create.isPending} disabled={!d.name.trim()}>
            Create metric
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}

function TypeFields({
  d,
  set,
  errors,
}: {
  d: Draft;
  set: (c: Partial<Draft>) => void;
  errors: Record<string, string>;
}) {
  const caseSwitch = (
    <Switch
      label="Case sensitive"
      checked={d.caseSensitive}
      onChange={(e) => set({ caseSensitive: e.currentTarget.checked })}
    />
  );
  switch (d.type) {
    case 'exact_match':
      return caseSwitch;
    case 'contains':
      return (
        <>
          <TextInput
            label="Value"
            description="Blank: the span's target"
            value={d.value}
            onChange={(e) => set({ value: e.currentTarget.value })}
            error={errors.value}
          />
          {caseSwitch}
        </>
      );
    case 'regex_match':
      return (
        <Group grow align="flex-start">
          <TextInput
            label="Pattern"
            required
            value={d.pattern}
            onChange={(e) => set({ pattern: e.currentTarget.value })}
            error={errors.pattern}
            ff="monospace"
          />
          <TextInput
            label="Flags"
            description="Any of i, m, s, u"
            value={d.flags}
            onChange={(e) => set({ flags: e.currentTarget.value })}
            error={errors.flags}
            maw={140}
          />
        </Group>
      );
    case 'json_schema':
      return (
        <JsonInput
          label="JSON schema"
          autosize
          minRows={4}
          validationError="Not valid JSON"
          formatOnBlur
          value={d.schema}
          onChange={(schema) => set({ schema })}
          error={errors.schema}
        />
      );
    case 'llm_judge':
      return (
        <>
          <Textarea
            label="Prompt"
            description='With {{output}}, {{target}} and {{inputs.<name>}}; the judge replies {"score": 0..1, "reason": "…"} or "score: x"'
            autosize
            minRows={3}
            value={d.judge.prompt_template}
            onChange={(e) => set({ judge: { ...d.judge, prompt_template: e.currentTarget.value } })}
            error={errors.prompt_template}
          />
          <Group grow>
            <TextInput
              label="Provider"
              value={d.judge.provider}
              onChange={(e) => set({ judge: { ...d.judge, provider: e.currentTarget.value } })}
              error={errors.provider}
            />
            <TextInput
              label="Model"
              value={d.judge.model}
              onChange={(e) => set({ judge: { ...d.judge, model: e.currentTarget.value } })}
              error={errors.model}
            />
          </Group>
        </>
      );
    default:
      return null;
  }
}
