import type { MonitorMetric } from '@sightline/schemas';
import { conditionOf, filterOf, incomplete, type FilterCondition } from '../../../lib/filter-fields';
import { formatCost, formatCount, formatLatency, formatPercent, formatScore } from '../../../lib/format';
import type { Monitor, MonitorCreate, MonitorPatch } from '../api';

export const METRIC_LABELS: Record<MonitorMetric, string> = {
  error_rate: 'Error rate',
  latency_p50: 'Latency p50',
  latency_p95: 'Latency p95',
  latency_p99: 'Latency p99',
  cost: 'Cost',
  tokens: 'Tokens',
  trace_count: 'Traces',
  score_mean: 'Mean score',
};

/** A value of the metric as people read it: a share, seconds, dollars, a count, a score. */
export function formatMetric(metric: MonitorMetric, value: number | null): string {
  if (value === null) return '–';
  if (metric === 'error_rate') return formatPercent(value);
  if (metric.startsWith('latency')) return formatLatency(value);
  if (metric === 'cost') return formatCost(value);
  if (metric === 'score_mean') return formatScore(value);
  return formatCount(value);
}

type ConditionKind = 'above' | 'below' | 'anomaly';
type Condition = Monitor['condition'];

/** The condition in words: "above 5%", "below 0.70", "3 MADs from the last 7 days". */
export function describeCondition(metric: MonitorMetric, c: Condition): string {
  if ('above' in c) return `above ${formatMetric(metric, c.above)}`;
  if ('below' in c) return `below ${formatMetric(metric, c.below)}`;
  return `${c.anomaly.mads} MADs from the same hour of the last 7 days`;
}

/** The bound drawn on the chart, when the condition has one. */
export const thresholdOf = (c: Condition) => ('above' in c ? c.above : 'below' in c ? c.below : null);

/** A channel as the form edits it: a saved webhook's secret is kept unless a new one is written. */
export type ChannelDraft = { kind: 'webhook' | 'slack'; url: string; secret: string; saved: boolean };

/** A monitor as the form edits it: numbers as their inputs hold them ('' while cleared). */
export type MonitorDraft = {
  name: string;
  metric: MonitorMetric;
  scoreName: string;
  filters: FilterCondition[];
  windowMinutes: number | string;
  conditionKind: ConditionKind;
  bound: number | string;
  minSamples: number | string;
  channels: ChannelDraft[];
  enabled: boolean;
};

export const NEW_MONITOR: MonitorDraft = {
  name: '',
  metric: 'error_rate',
  scoreName: '',
  filters: [],
  windowMinutes: 15,
  conditionKind: 'above',
  bound: 0.05,
  minSamples: 10,
  channels: [],
  enabled: true,
};

export function draftOf(m: Monitor): MonitorDraft {
  const c = m.condition;
  return {
    name: m.name,
    metric: m.metric,
    scoreName: m.score_name ?? '',
    filters: m.filters.map(conditionOf),
    windowMinutes: m.window_minutes,
    conditionKind: 'above' in c ? 'above' : 'below' in c ? 'below' : 'anomaly',
    bound: 'above' in c ? c.above : 'below' in c ? c.below : c.anomaly.mads,
    minSamples: m.min_samples,
    channels: m.channels.map((ch) => ({ kind: ch.kind, url: ch.url, secret: '', saved: ch.kind === 'webhook' })),
    enabled: m.enabled,
  };
}

/** What is missing before the draft can be saved, or null. */
export function missing(d: MonitorDraft): string | null {
  if (!d.name.trim()) return 'name the monitor';
  if (d.metric === 'score_mean' && !d.scoreName.trim()) return 'name the score';
  const i = d.filters.findIndex((c) => incomplete(c));
  if (i >= 0) return `complete filter ${i + 1} (${incomplete(d.filters[i]!)})`;
  if (d.windowMinutes === '') return 'give the window';
  if (d.bound === '') return d.conditionKind === 'anomaly' ? 'give the deviations' : 'give the threshold';
  if (d.minSamples === '') return 'give the minimum of traces';
  const c = d.channels.findIndex((ch) => !ch.url.trim() || (ch.kind === 'webhook' && !ch.saved && !ch.secret));
  if (c >= 0) return `complete channel ${c + 1} (${d.channels[c]!.url.trim() ? 'give its secret' : 'give its URL'})`;
  return null;
}

/** The metric as the preview asks for it (its filters as far as they are complete). */
export const metricOf = (d: MonitorDraft) => ({
  metric: d.metric,
  ...(d.metric === 'score_mean' && { score_name: d.scoreName.trim() || null }),
  filters: d.filters.filter((c) => !incomplete(c)).map(filterOf),
  window_minutes: Number(d.windowMinutes) || 1,
});

export const conditionOfDraft = (d: MonitorDraft): Condition =>
  d.conditionKind === 'anomaly'
    ? { anomaly: { mads: Number(d.bound) } }
    : d.conditionKind === 'above'
      ? { above: Number(d.bound) }
      : { below: Number(d.bound) };

/**
 * The monitor's fields as POST and PATCH take them: a saved webhook whose secret was not written again is
 * sent without one, and keeps its own (PATCH).
 */
export function fieldsOf(d: MonitorDraft): Omit<MonitorCreate, 'project_uuid' | 'project_name' | 'channels'> & {
  channels: MonitorPatch['channels'];
} {
  return {
    name: d.name.trim(),
    ...metricOf(d),
    score_name: d.metric === 'score_mean' ? d.scoreName.trim() : null,
    filters: d.filters.map(filterOf),
    condition: conditionOfDraft(d),
    min_samples: Number(d.minSamples),
    enabled: d.enabled,
    channels: d.channels.map((ch) =>
      ch.kind === 'webhook'
        ? { kind: 'webhook' as const, url: ch.url.trim(), ...(ch.secret && { secret: ch.secret }) }
        : { kind: 'slack' as const, url: ch.url.trim() },
    ),
  };
}
