import type { EvalRule, EvalRuleCreate } from '../../../api/types';
import { conditionOf, filterOf, incomplete, type FilterCondition } from '../../../lib/filter-fields';

/** A rule as the form edits it: numbers as their inputs hold them ('' while cleared). */
export type RuleDraft = {
  name: string;
  metricNames: string[];
  /** Of the matching traces, 0 to 100. */
  samplePercent: number | string;
  filters: FilterCondition[];
  targetKind: 'root' | 'span';
  spanName: string;
  settleSeconds: number | string;
  /** USD a UTC day; '' for no limit. */
  dailyLimit: number | string;
  reevaluate: boolean;
  enabled: boolean;
  /** The annotation queue the rule sends traces to (null: none), when it fails or scores below a bound. */
  queueId: string | null;
  queueOnError: boolean;
  queueMetric: string | null;
  /** '' while no bound is given. */
  queueBelow: number | string;
};

export const NEW_RULE: RuleDraft = {
  name: '',
  metricNames: [],
  samplePercent: 100,
  filters: [],
  targetKind: 'root',
  spanName: '',
  settleSeconds: 10,
  dailyLimit: '',
  reevaluate: false,
  enabled: true,
  queueId: null,
  queueOnError: false,
  queueMetric: null,
  queueBelow: '',
};

export function draftOf(rule: EvalRule): RuleDraft {
  const feed = rule.annotation_queue;
  return {
    name: rule.name,
    metricNames: rule.metric_names,
    // 0.07 * 100 is 7.000000000000001.
    samplePercent: Math.round(rule.sample_rate * 10_000) / 100,
    filters: rule.filters.map(conditionOf),
    targetKind: rule.target.kind,
    spanName: rule.target.kind === 'span' ? rule.target.span_name : '',
    settleSeconds: rule.settle_seconds,
    dailyLimit: rule.daily_cost_limit ?? '',
    reevaluate: rule.reevaluate_on_update,
    enabled: rule.enabled,
    queueId: feed?.queue_id ?? null,
    queueOnError: !!feed?.on_error,
    queueMetric: feed?.on_result?.metric_name ?? null,
    queueBelow: feed?.on_result?.below ?? '',
  };
}

/** The sample rate (0 to 1) of a percentage as its input holds it. */
export const sampleRateOf = (percent: number | string) => Number(percent) / 100;

/** What is missing before the draft can be saved, or null. */
export function missing(d: RuleDraft): string | null {
  if (!d.name.trim()) return 'name the rule';
  if (!d.metricNames.length) return 'choose a metric';
  if (d.samplePercent === '') return 'give the sample rate';
  const i = d.filters.findIndex((c) => incomplete(c));
  if (i >= 0) return `complete filter ${i + 1} (${incomplete(d.filters[i]!)})`;
  if (d.targetKind === 'span' && !d.spanName.trim()) return 'name the span to evaluate';
  if (d.settleSeconds === '') return 'give the settle time';
  if (d.queueId && !d.queueOnError && !(d.queueMetric && d.queueBelow !== ''))
    return 'say which traces go to the queue (a failure, or a score below a bound)';
  return null;
}

/** The rule's fields as POST and PATCH take them. */
export function fieldsOf(d: RuleDraft): Omit<EvalRuleCreate, 'project_uuid' | 'project_name'> {
  return {
    name: d.name.trim(),
    metric_names: d.metricNames,
    sample_rate: sampleRateOf(d.samplePercent),
    filters: d.filters.map(filterOf),
    target: d.targetKind === 'span' ? { kind: 'span', span_name: d.spanName.trim() } : { kind: 'root' },
    settle_seconds: Number(d.settleSeconds),
    daily_cost_limit: d.dailyLimit === '' ? null : Number(d.dailyLimit),
    reevaluate_on_update: d.reevaluate,
    enabled: d.enabled,
    annotation_queue: d.queueId
      ? {
          queue_id: d.queueId,
          on_result:
            d.queueMetric && d.queueBelow !== '' ? { metric_name: d.queueMetric, below: Number(d.queueBelow) } : null,
          on_error: d.queueOnError,
        }
      : null,
  };
}

/** The fields a span of a trace tree (`GET /trace_log/{id}`) is scored on, and its children. */
export type TraceTree = {
  trace_name?: string | null;
  output?: string | null;
  output_for_eval_metrics?: string | null;
  target?: string | null;
  inputs?: Record<string, unknown> | null;
  children?: TraceTree[];
};

/** The span a rule would score in this trace: its root, or the first span named `spanName` (breadth first). */
export function exampleSpan(root: TraceTree, spanName: string | null): TraceTree | null {
  if (!spanName) return root;
  const queue = [root];
  for (let span = queue.shift(); span; span = queue.shift()) {
    if (span.trace_name === spanName) return span;
    queue.push(...(span.children ?? []));
  }
  return null;
}

/** A time as a datetime-local input holds it: in the browser's zone, to the minute. */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A datetime-local input's value (the browser's zone) as the API takes a time; null when it is not one. */
export function fromLocalInput(value: string): string | null {
  const date = new Date(value);
  return value && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}
