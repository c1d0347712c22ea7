import { Button, Group, List, Loader, Paper, Stack, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { IconPlayerPlay } from '@tabler/icons-react';
import { useMemo } from 'react';
import { errorMessage } from '../../../api/client';
import type { EvalMetric, EvalRulePreview } from '../../../api/types';
import { formatCost, formatCount, formatScore } from '../../../lib/format';
import { useEvalRulePreview, useTryOnTrace } from '../api';
import { completeFilters } from '../../../lib/filter-fields';
import { sampleRateOf, type RuleDraft } from '../lib/rules';

/** Asked once the metrics, the sample rate and the filters have stopped changing for this long. */
const PREVIEW_DEBOUNCE_MS = 400;

/**
 * What the rule being written would do at the last day's traffic: the traces it would match and evaluate,
 * its judges' spend a day, and its metrics tried on the newest matching trace.
 */
export function RulePreview({
  projectUuid,
  draft,
  metrics,
}: {
  projectUuid: string;
  draft: RuleDraft;
  metrics: EvalMetric[];
}) {
  const { metricNames, samplePercent, filters } = draft;
  // One object while these stay the same: a fresh one each render would restart the debounce for ever.
  const request = useMemo(
    () =>
      metricNames.length && samplePercent !== ''
        ? {
            project_uuid: projectUuid,
            metric_names: metricNames,
            sample_rate: sampleRateOf(samplePercent),
            filters: completeFilters(filters),
          }
        : null,
    [projectUuid, metricNames, samplePercent, filters],
  );
  const [debounced] = useDebouncedValue(request, PREVIEW_DEBOUNCE_MS);
  const preview = useEvalRulePreview(debounced);
  const partial = filters.length > completeFilters(filters).length;

  return (
    <Paper withBorder radius="md" p="sm" bg="var(--mantine-color-default-hover)">
      <Stack gap="xs">
        <Group gap="xs">
          <Text size="sm" fw={600}>
            Preview: the last 24 hours
          </Text>
          {(preview.isFetching || request !== debounced) && request && <Loader size={14} aria-hidden />}
        </Group>
        <div aria-live="polite">
          {!request || !debounced ? (
            <Text size="sm" c="dimmed">
              {request ? 'Counting…' : 'Choose a metric and a sample rate to see what the rule would evaluate.'}
            </Text>
          ) : preview.isError ? (
            <Text size="sm" c="red">
              No preview: {errorMessage(preview.error)}
            </Text>
          ) : preview.data ? (
            <Figures preview={preview.data} dailyLimit={draft.dailyLimit} />
          ) : (
            <Text size="sm" c="dimmed">
              Counting…
            </Text>
          )}
        </div>
        {partial && (
          <Text size="xs" c="dimmed">
            The filters not yet complete are left out of the count.
          </Text>
        )}
        {request && preview.data && !preview.isError && (
          <TryOnTrace
            traceId={preview.data.example_trace_id}
            spanName={draft.targetKind === 'span' ? draft.spanName.trim() || null : null}
            metrics={metrics.filter((m) => metricNames.includes(m.name))}
            judges={preview.data.judge_metrics.length > 0}
          />
        )}
      </Stack>
    </Paper>
  );
}

function Figures({ preview: p, dailyLimit }: { preview: EvalRulePreview; dailyLimit: number | string }) {
  const spend =
    p.judge_metrics.length === 0
      ? 'Judge spend: none, no judge among these metrics.'
      : p.estimated_daily_cost === null
        ? `Judge spend a day: not known until the judge has run (${p.judge_metrics.join(', ')}).`
        : `Judge spend: about ${formatCost(p.estimated_daily_cost)} a day (${p.judge_metrics.join(', ')}).`;
  const overLimit = dailyLimit !== '' && p.estimated_daily_cost !== null && p.estimated_daily_cost > Number(dailyLimit);
  return (
    <Stack gap={4}>
      <Text size="sm">
        {formatCount(p.matching_24h)} trace{p.matching_24h === 1 ? '' : 's'} of the last 24 h match,{' '}
        {formatCount(p.sampled_24h)} would be evaluated.
      </Text>
      <Text size="sm">{spend}</Text>
      {overLimit && (
        <Text size="sm" c="orange">
          That is above the daily limit: the rule would pause each day once it is reached.
        </Text>
      )}
    </Stack>
  );
}

function TryOnTrace({
  traceId,
  spanName,
  metrics,
  judges,
}: {
  traceId: string | null;
  spanName: string | null;
  metrics: EvalMetric[];
  judges: boolean;
}) {
  const tryIt = useTryOnTrace();
  // Results of another example, or of metrics since taken out, are not this preview's.
  const results =
    tryIt.variables?.traceId === traceId
      ? tryIt.data?.filter((r) => metrics.some((m) => m.name === r.metric))
      : undefined;
  return (
    <Stack gap="xs">
      <Group gap="sm">
        <Button
          size="xs"
          variant="light"
          leftSection={<IconPlayerPlay size={14} />}
          disabled={!traceId || !metrics.length}
          loading={tryIt.isPending}
          onClick={() => traceId && tryIt.mutate({ traceId, spanName, metrics })}
        >
          Try on the newest trace
        </Button>
        <Text size="xs" c="dimmed">
          {!traceId
            ? 'No trace matched in the last 24 hours to try the metrics on.'
            : judges
              ? 'Nothing is saved; a judge is called through the gateway, logged and costed like any completion.'
              : 'Nothing is saved.'}
        </Text>
      </Group>
      <div aria-live="polite">
        {tryIt.isError && (
          <Text size="sm" c="red">
            Could not try: {errorMessage(tryIt.error)}
          </Text>
        )}
        {results && (
          <List size="sm" spacing={2} aria-label="Results on the newest trace">
            {results.map(({ metric, result }) => (
              <List.Item key={metric}>
                <Text span size="sm" fw={500}>
                  {metric}
                </Text>
                {'score' in result ? (
                  <Text span size="sm">
                    : score {formatScore(result.score)}
                    {result.reason ? `: ${result.reason}` : ''}
                  </Text>
                ) : (
                  <Text span size="sm" c="red">
                    : no score, {result.error}
                  </Text>
                )}
              </List.Item>
            ))}
          </List>
        )}
      </div>
    </Stack>
  );
}
