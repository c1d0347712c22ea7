import {
  Alert,
  Button,
  Group,
  JsonInput,
  Paper,
  Select,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useState } from 'react';
import { errorMessage } from '../../api/client';
import type { EvalMetric } from '../../api/types';
import { formatScore } from '../../lib/format';
import { useCreateEvalMetric, useTryEvalMetric, useUpdateEvalMetric } from './api';
import { draftOf, EMPTY, fieldErrors, metricOf, TYPES, updateOf, type Draft } from './metric-draft';

/** A new metric's form: created, or tried on a pasted output first. */
export function NewMetricForm() {
  const create = useCreateEvalMetric();
  return (
    <MetricForm
      title="New metric"
      initial={EMPTY}
      save={{
        label: 'Create metric',
        mutation: create,
        run: (d, reset) => create.mutate(metricOf(d), { onSuccess: reset }),
      }}
    />
  );
}

/**
 * A saved metric's configuration, edited as its next version (its name and type stay: spans and rules name
 * it), and tried on a pasted output as it stands in the form. Read-only without `canWrite`.
 */
export function EditMetricForm({ metric, canWrite }: { metric: EvalMetric; canWrite: boolean }) {
  const update = useUpdateEvalMetric(metric.id);
  const saved = draftOf(metric);
  return (
    <MetricForm
      title={`${metric.name}: version ${metric.version}`}
      initial={saved}
      fixed
      unchanged={(d) => JSON.stringify(metricOf(d)) === JSON.stringify(metricOf(saved))}
      save={
        canWrite
          ? {
              label: `Save as version ${metric.version + 1}`,
              mutation: update,
              run: (d) => update.mutate(updateOf(d)),
            }
          : null
      }
    />
  );
}

type Save = {
  label: string;
  mutation: { isPending: boolean; isError: boolean; error: unknown };
  /** `reset`: back to the initial draft (after a metric is created). */
  run: (d: Draft, reset: () => void) => void;
};

function MetricForm({
  title,
  initial,
  fixed = false,
  unchanged,
  save,
}: {
  title: string;
  initial: Draft;
  /** The name and type are the saved metric's. */
  fixed?: boolean;
  unchanged?: (d: Draft) => boolean;
  save: Save | null;
}) {
  const [d, setD] = useState<Draft>(initial);
  const [sample, setSample] = useState({ output: '', target: '' });
  const tryIt = useTryEvalMetric();
  const readOnly = !save;
  const set = (change: Partial<Draft>) => setD({ ...d, ...change });
  const errors = { ...fieldErrors(tryIt.error), ...fieldErrors(save?.mutation.error) };
  const type = TYPES.find((t) => t.value === d.type)!;
  const result = tryIt.data;
  const same = unchanged?.(d) ?? false;
  return (
    <Paper withBorder radius="md" p="md">
      <Stack
        gap="sm"
        component="form"
        aria-label={title}
        onSubmit={(e) => {
          e.preventDefault();
          save?.run(d, () => setD(initial));
        }}
      >
        <Text fw={600}>{title}</Text>
        {/* A disabled fieldset disables every field in it: a viewer reads the configuration. */}
        <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
          <Stack gap="sm">
            <Group grow align="flex-start">
              <TextInput
                label="Name"
                required
                value={d.name}
                onChange={(e) => set({ name: e.currentTarget.value })}
                error={errors.name}
                disabled={fixed}
              />
              <Select
                label="Type"
                data={TYPES.map(({ value, label }) => ({ value, label }))}
                value={d.type}
                onChange={(v) => v && set({ type: v as Draft['type'] })}
                allowDeselect={false}
                disabled={fixed || readOnly}
                error={errors.type}
              />
            </Group>
            <Text size="sm" c="dimmed">
              {type.help}
            </Text>
            <TypeFields d={d} set={set} errors={errors} />
          </Stack>
        </fieldset>
        {!readOnly && (
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
        )}
        {(save?.mutation.isError || tryIt.isError) && !Object.keys(errors).length && (
          <Alert color="red">{errorMessage(save?.mutation.error ?? tryIt.error)}</Alert>
        )}
        {save && (
          <Group justify="flex-end">
            {same && (
              <Text size="sm" c="dimmed">
                Change the configuration to save a new version.
              </Text>
            )}
            <Button type="submit" loading={save.mutation.isPending} disabled={!d.name.trim() || same}>
              {save.label}
            </Button>
          </Group>
        )}
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
