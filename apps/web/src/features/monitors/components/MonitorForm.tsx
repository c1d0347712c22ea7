import {
  Button,
  Fieldset,
  Group,
  NumberInput,
  Paper,
  PasswordInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Text,
  TextInput,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconBrandSlack, IconTrash, IconWebhook } from '@tabler/icons-react';
import { useState } from 'react';
import { errorMessage } from '../../../api/client';
import { FilterList } from '../../../components/FilterList';
import { EditFormModal, NameInput } from '../../../components/ui/EditFormModal';
import { fieldErrors } from '../../../lib/field-errors';
import { useCreateMonitor, useMonitorPreview, useUpdateMonitor, type Monitor, type MonitorCreate } from '../api';
import {
  conditionOfDraft,
  draftOf,
  fieldsOf,
  METRIC_LABELS,
  metricOf,
  missing,
  NEW_MONITOR,
  thresholdOf,
  type ChannelDraft,
  type MonitorDraft,
} from '../lib/monitors';
import { MetricChart } from './MetricChart';

/** The fields the form shows the API's refusals beside; a refusal of any other is shown under the form. */
const PLACED = /^(name|score_name|filters|window_minutes|condition|min_samples|channels)(\.|$)/;

/** What a threshold of each metric is written in. */
const UNITS: Record<MonitorDraft['metric'], string> = {
  error_rate: 'a share: 0.05 is 5%',
  latency_p50: 'seconds',
  latency_p95: 'seconds',
  latency_p99: 'seconds',
  cost: 'USD over the window',
  tokens: 'tokens over the window',
  trace_count: 'traces over the window',
  score_mean: 'the score',
};

/** Creates a monitor (`monitor` null) or edits one, with its metric's last 24 hours drawn before saving. */
export function MonitorForm({
  projectUuid,
  monitor,
  onClose,
}: {
  projectUuid: string;
  monitor: Monitor | null;
  onClose: () => void;
}) {
  const [d, setD] = useState<MonitorDraft>(() => (monitor ? draftOf(monitor) : NEW_MONITOR));
  const create = useCreateMonitor();
  const update = useUpdateMonitor();
  const save = monitor ? update : create;
  const set = (change: Partial<MonitorDraft>) => setD((prev) => ({ ...prev, ...change }));
  const setChannel = (i: number, change: Partial<ChannelDraft>) =>
    set({ channels: d.channels.map((c, j) => (j === i ? { ...c, ...change } : c)) });
  const errors = fieldErrors(save.error);
  const toSave = missing(d);

  // The preview follows the metric as it is written, once the typing settles.
  const [request] = useDebouncedValue(
    d.metric === 'score_mean' && !d.scoreName.trim() ? null : { project_uuid: projectUuid, ...metricOf(d) },
    400,
  );
  const preview = useMonitorPreview(request);

  const submit = () => {
    const fields = fieldsOf(d);
    if (monitor) update.mutate({ id: monitor.id, ...fields }, { onSuccess: onClose });
    // A new monitor's webhooks all have their secret (missing() asks for it).
    else create.mutate({ ...(fields as MonitorCreate), project_uuid: projectUuid }, { onSuccess: onClose });
  };

  return (
    <EditFormModal
      noun="monitor"
      editing={monitor?.name ?? null}
      onClose={onClose}
      onSubmit={submit}
      save={save}
      placed={PLACED}
      disabled={!!toSave}
    >
      <NameInput value={d.name} onChange={(name) => set({ name })} error={errors.name} />
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <Select
          label="Metric"
          data={Object.entries(METRIC_LABELS).map(([value, label]) => ({ value, label }))}
          value={d.metric}
          allowDeselect={false}
          onChange={(metric) => metric && set({ metric: metric as MonitorDraft['metric'] })}
        />
        {d.metric === 'score_mean' && (
          <TextInput
            label="Score name"
            required
            placeholder="helpfulness"
            value={d.scoreName}
            onChange={(e) => set({ scoreName: e.currentTarget.value })}
            error={errors.score_name}
          />
        )}
      </SimpleGrid>
      <FilterList
        filters={d.filters}
        onChange={(filters) => set({ filters })}
        errors={errors}
        description="The monitor reads the project's production traces whose root span passes every filter; without a filter, all of them."
      />
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <NumberInput
          label="Window"
          description="Minutes back from each reading"
          suffix=" min"
          min={1}
          max={1440}
          allowDecimal={false}
          allowNegative={false}
          clampBehavior="strict"
          value={d.windowMinutes}
          onChange={(windowMinutes) => set({ windowMinutes })}
          error={errors.window_minutes}
        />
        <NumberInput
          label="Minimum of traces"
          description="Fewer in the window: no data"
          min={1}
          allowDecimal={false}
          allowNegative={false}
          value={d.minSamples}
          onChange={(minSamples) => set({ minSamples })}
          error={errors.min_samples}
        />
      </SimpleGrid>
      <Fieldset legend="Fires when the value is" variant="unstyled">
        <Group align="flex-end" gap="sm">
          <SegmentedControl
            aria-label="Condition"
            value={d.conditionKind}
            onChange={(v) =>
              set({ conditionKind: v as MonitorDraft['conditionKind'], bound: v === 'anomaly' ? 3 : d.bound })
            }
            data={[
              { value: 'above', label: 'Above' },
              { value: 'below', label: 'Below' },
              { value: 'anomaly', label: 'Unusual' },
            ]}
          />
          <NumberInput
            aria-label={d.conditionKind === 'anomaly' ? 'Median absolute deviations' : 'Threshold'}
            description={
              d.conditionKind === 'anomaly'
                ? 'Median absolute deviations from the same hour of the last 7 days'
                : UNITS[d.metric]
            }
            min={d.conditionKind === 'anomaly' ? 0.1 : undefined}
            decimalScale={6}
            value={d.bound}
            onChange={(bound) => set({ bound })}
            error={errors.condition}
            w={240}
          />
        </Group>
      </Fieldset>
      <Fieldset legend="Tell" variant="unstyled">
        <Stack gap="xs">
          <Text size="sm" c="dimmed">
            Each channel hears once when the monitor fires and once when it stops. A webhook receives signed JSON
            (x-sightline-signature); Slack, an incoming-webhook message.
          </Text>
          {d.channels.map((c, i) => (
            <Paper key={i} withBorder p="xs" radius="sm">
              <Group align="flex-start" gap="xs" wrap="nowrap">
                <TextInput
                  style={{ flex: 1 }}
                  label={`${c.kind === 'slack' ? 'Slack webhook' : 'Webhook'} URL (channel ${i + 1})`}
                  placeholder={
                    c.kind === 'slack' ? 'https://hooks.slack.com/services/…' : 'https://example.com/hooks/sightline'
                  }
                  value={c.url}
                  onChange={(e) => setChannel(i, { url: e.currentTarget.value })}
                  error={errors[`channels.${i}.url`] ?? errors[`channels.${i}`]}
                />
                {c.kind === 'webhook' && (
                  <PasswordInput
                    w={220}
                    label={`Secret (channel ${i + 1})`}
                    placeholder={c.saved ? 'Unchanged' : 'At least 16 characters'}
                    value={c.secret}
                    onChange={(e) => setChannel(i, { secret: e.currentTarget.value })}
                    error={errors[`channels.${i}.secret`]}
                  />
                )}
                <Button
                  mt={24}
                  size="xs"
                  variant="subtle"
                  color="red"
                  aria-label={`Remove channel ${i + 1}`}
                  onClick={() => set({ channels: d.channels.filter((_, j) => j !== i) })}
                >
                  <IconTrash size={14} />
                </Button>
              </Group>
            </Paper>
          ))}
          <Group gap="xs">
            <Button
              size="xs"
              variant="default"
              leftSection={<IconWebhook size={14} />}
              onClick={() => set({ channels: [...d.channels, { kind: 'webhook', url: '', secret: '', saved: false }] })}
            >
              Add webhook
            </Button>
            <Button
              size="xs"
              variant="default"
              leftSection={<IconBrandSlack size={14} />}
              onClick={() => set({ channels: [...d.channels, { kind: 'slack', url: '', secret: '', saved: false }] })}
            >
              Add Slack
            </Button>
          </Group>
        </Stack>
      </Fieldset>
      <Switch
        label="Enabled: read the metric every interval"
        checked={d.enabled}
        onChange={(e) => set({ enabled: e.currentTarget.checked })}
      />
      <Paper withBorder radius="md" p="sm" role="region" aria-label="Preview">
        <Text size="sm" fw={600} mb={4}>
          The last 24 hours
        </Text>
        {!request ? (
          <Text size="sm" c="dimmed">
            Name the score to see it.
          </Text>
        ) : preview.isError ? (
          <Text size="sm" c="red">
            The metric could not be read: {errorMessage(preview.error)}
          </Text>
        ) : !preview.data ? (
          <Text size="sm" c="dimmed">
            Reading the metric…
          </Text>
        ) : (
          <MetricChart
            metric={d.metric}
            series={preview.data.series}
            threshold={d.bound === '' ? null : thresholdOf(conditionOfDraft(d))}
            minSamples={Number(d.minSamples) || 1}
            label="Preview"
          />
        )}
      </Paper>
      {toSave && (
        <Text size="xs" c="dimmed" ta="right">
          To save: {toSave}.
        </Text>
      )}
    </EditFormModal>
  );
}
