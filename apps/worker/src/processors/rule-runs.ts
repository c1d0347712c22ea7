import type { Redis } from 'ioredis';
import { deterministicMetrics } from '@sightline/core';
import {
  applyEvalResults,
  evalInputsOf,
  feedQueue,
  findEvalMetrics,
  finishRuleRuns,
  type EvalInputs,
  type EvalMetric,
  type RuleSettings,
  type Sql,
} from '@sightline/db';
import { takeWatermark, type Producer, type RedisKeys } from '@sightline/queues';
import type { EvalResult, SpanEvent } from '@sightline/schemas';

export type RunDeps = { sql: Sql; redis: Redis; keys: RedisKeys; evals: Producer<'eval'> };
type Run = { trace_id: string; root_trace_id: string; generation: number };

/**
 * Carries out a rule's claimed runs: live ones, and those of a backfill with a judge or left to it by
 * scoreBackfillPage (which carries out the rest of a backfill's). Metrics that need no judge are scored at once,
 * every run in one write of their results (as a span's own evaluations are written, by metric name, so a
 * run carried out again replaces its scores), then the runs are finished. A rule with a judge queues its
 * runs as eval jobs, which call the judge through the gateway, retry, and finish each run.
 */
export async function carryOutRuns(deps: RunDeps, rule: RuleSettings, runs: Run[], backfillId?: string): Promise<void> {
  if (!runs.length) return;
  const metrics = await findEvalMetrics(deps.sql, rule.organization_id, { names: rule.metric_names });
  if (metrics.some((m) => m.type === 'llm_judge')) return queueRuns(deps, rule, runs, backfillId);
  const score = scorer(rule, metrics);
  const seq = await takeWatermark(deps.redis, deps.keys);
  const spans = await evalInputsOf(
    deps.sql,
    rule.organization_id,
    runs.map((r) => r.trace_id),
  );
  const events: SpanEvent[] = spans.map((span) => ({
    kind: 'eval',
    organization_id: rule.organization_id,
    trace_id: span.trace_id,
    seq,
    fields: { eval_scores: score(span) },
  }));
  if (events.length) await applyEvalResults(deps.sql, events);
  const rootOf = new Map(runs.map((r) => [r.trace_id, r.root_trace_id]));
  await feedQueue(
    deps.sql,
    rule.organization_id,
    rule.annotation_queue,
    events.map((e) => ({ root_trace_id: rootOf.get(e.trace_id)!, results: e.fields.eval_scores! })),
  );
  await finishRuleRuns(deps.sql, rule.id, runs);
}

/** The rule's metrics without a judge, as a function of a span's output, target and inputs. */
export function scorer(
  rule: Pick<RuleSettings, 'metric_names'>,
  metrics: readonly EvalMetric[],
): (span: EvalInputs) => Record<string, EvalResult> {
  const byName = new Map(metrics.map((m) => [m.name, m]));
  return (span) => {
    const input = {
      output: span.output_for_eval_metrics ?? span.output ?? '',
      target: span.target,
      inputs: span.inputs ?? {},
    };
    const results: Record<string, EvalResult> = {};
    for (const name of rule.metric_names) {
      const metric = byName.get(name);
      // Each result says which version of its metric made it.
      const made = metric && { metric_version: metric.version };
      try {
        results[name] = metric
          ? { ...deterministicMetrics[metric.type](input, metric.config as never), ...made }
          : { error: `unknown eval metric '${name}'` };
      } catch (err) {
        results[name] = { error: (err as Error).message, ...made };
      }
    }
    return results;
  };
}

/** The runs as eval jobs; the job id makes queueing a run again (a retried settle or backfill page) a no-op. */
async function queueRuns(deps: RunDeps, rule: RuleSettings, runs: Run[], backfillId?: string): Promise<void> {
  await deps.evals.addBulk(
    runs.map((run) => ({
      payload: {
        organization_id: rule.organization_id,
        trace_id: run.trace_id,
        metric_names: rule.metric_names,
        rule: { id: rule.id, generation: run.generation, ...(backfillId && { backfill: backfillId }) },
      },
      options: { jobId: `rule-${rule.id}-${run.trace_id}-${run.generation}` },
    })),
  );
}
