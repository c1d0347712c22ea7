import { Anchor, MultiSelect, NumberInput, Radio, SimpleGrid, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../../../api/client';
import { useEvalMetrics } from '../../../api/eval-metrics';
import type { EvalRule } from '../../../api/types';
import { FilterList } from '../../../components/FilterList';
import { EditFormModal, NameInput } from '../../../components/ui/EditFormModal';
import { errorAt, fieldErrors } from '../../../lib/field-errors';
import { useCreateEvalRule, useUpdateEvalRule } from '../api';
import { draftOf, fieldsOf, missing, NEW_RULE, type RuleDraft } from '../lib/rules';
import { QueueFeedFields } from './QueueFeedFields';
import { RulePreview } from './RulePreview';

/** The fields the form shows the API's refusals beside; a refusal of any other is shown under the form. */
const PLACED = /^(name|metric_names|sample_rate|filters|target|settle_seconds|daily_cost_limit|annotation_queue)(\.|$)/;

/** Creates a rule (`rule` null) or edits one, with a preview of what it would evaluate before it is saved. */
export function RuleForm({
  projectUuid,
  rule,
  onClose,
}: {
  projectUuid: string;
  rule: EvalRule | null;
  onClose: () => void;
}) {
  const [d, setD] = useState<RuleDraft>(() => (rule ? draftOf(rule) : NEW_RULE));
  const create = useCreateEvalRule();
  const update = useUpdateEvalRule();
  const save = rule ? update : create;
  const metrics = useEvalMetrics();
  const set = (change: Partial<RuleDraft>) => setD((prev) => ({ ...prev, ...change }));

  const errors = fieldErrors(save.error);
  const toSave = missing(d);

  const submit = () => {
    const fields = fieldsOf(d);
    if (rule) update.mutate({ id: rule.id, ...fields }, { onSuccess: onClose });
    else create.mutate({ ...fields, project_uuid: projectUuid }, { onSuccess: onClose });
  };

  const metricNames = metrics.data?.map((m) => m.name) ?? [];
  return (
    <EditFormModal
      noun="rule"
      editing={rule?.name ?? null}
      onClose={onClose}
      onSubmit={submit}
      save={save}
      placed={PLACED}
      disabled={!!toSave}
    >
      <NameInput value={d.name} onChange={(name) => set({ name })} error={errors.name} />
      <MultiSelect
        label="Metrics"
        required
        description={
          metrics.isError ? (
            `The metrics could not load: ${errorMessage(metrics.error)}`
          ) : metrics.data?.length === 0 ? (
            <>
              No metrics yet: create one on the{' '}
              <Anchor component={Link} to="/evals" inherit>
                Metrics page
              </Anchor>
              .
            </>
          ) : (
            'Each scores every span the rule evaluates.'
          )
        }
        placeholder={metrics.isPending ? 'Loading the metrics…' : d.metricNames.length ? undefined : 'Choose metrics'}
        // A rule's metric deleted since keeps its name here, so that it can be taken out.
        data={[...new Set([...metricNames, ...d.metricNames])]}
        value={d.metricNames}
        onChange={(metricNames) => set({ metricNames })}
        searchable
        nothingFoundMessage="No metric of that name"
        error={errorAt(errors, 'metric_names')}
      />
      <Radio.Group
        label="Evaluate"
        value={d.targetKind}
        onChange={(v) => set({ targetKind: v as RuleDraft['targetKind'] })}
        error={errors.target}
      >
        <Stack gap="xs" mt={6}>
          <Radio value="root" label="The root span of each trace" />
          <Radio value="span" label="Every span of a given name in each trace" />
        </Stack>
      </Radio.Group>
      {d.targetKind === 'span' && (
        <TextInput
          label="Span name"
          required
          placeholder="call-model"
          value={d.spanName}
          onChange={(e) => set({ spanName: e.currentTarget.value })}
          error={errorAt(errors, 'target.span_name')}
        />
      )}
      <FilterList
        filters={d.filters}
        onChange={(filters) => set({ filters })}
        errors={errors}
        description="A trace is evaluated when its root span passes every filter; without a filter, every trace is."
      />
      <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
        <NumberInput
          label="Sample rate"
          description="Of the matching traces"
          suffix="%"
          min={0}
          max={100}
          decimalScale={2}
          clampBehavior="strict"
          allowNegative={false}
          value={d.samplePercent}
          onChange={(samplePercent) => set({ samplePercent })}
          error={errors.sample_rate}
        />
        <NumberInput
          label="Settle time"
          description="Quiet seconds before scoring"
          suffix=" s"
          min={0}
          max={86_400}
          allowDecimal={false}
          allowNegative={false}
          value={d.settleSeconds}
          onChange={(settleSeconds) => set({ settleSeconds })}
          error={errors.settle_seconds}
        />
        <NumberInput
          label="Daily judge limit"
          description="USD a UTC day; blank: none"
          prefix="$"
          placeholder="No limit"
          min={0}
          decimalScale={2}
          allowNegative={false}
          value={d.dailyLimit}
          onChange={(dailyLimit) => set({ dailyLimit })}
          error={errors.daily_cost_limit}
        />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt={-8}>
        A trace is scored once no span of it has been written for the settle time, so that late spans are in. Past the
        daily limit, the rule pauses until the next UTC day.
      </Text>
      <Switch
        label="Re-evaluate a trace when it is updated after being scored"
        checked={d.reevaluate}
        onChange={(e) => set({ reevaluate: e.currentTarget.checked })}
      />
      <Switch
        label="Enabled: score the project's new traces"
        checked={d.enabled}
        onChange={(e) => set({ enabled: e.currentTarget.checked })}
      />
      <QueueFeedFields projectUuid={projectUuid} draft={d} onChange={set} errors={errors} />
      <RulePreview projectUuid={projectUuid} draft={d} metrics={metrics.data ?? []} />
      {toSave && (
        <Text size="xs" c="dimmed" ta="right">
          To save: {toSave}.
        </Text>
      )}
    </EditFormModal>
  );
}
