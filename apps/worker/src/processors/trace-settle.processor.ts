import { LRUCache } from 'lru-cache';
import { isSampledIn } from '@sightline/core';
import {
  claimRuleRuns,
  liveRuleProjects,
  liveRulesOf,
  ruleTargets,
  settledRoot,
  type Sql,
  type WrittenTrace,
} from '@sightline/db';
import type { Producer } from '@sightline/queues';
import type { Processor } from '../register-worker';

/** How long the span writer trusts what it read of an organization's rules: a rule saved takes effect within it. */
export const RULES_CACHE_MS = 2000;

/**
 * For the span writer: each written trace of a project with enabled rules gets one settle job, pushed back
 * by every later write (BullMQ's deduplication, rescheduled), so it runs once no span of the trace has
 * changed for the rules' settle time. A write while the job runs keeps one more job for afterwards.
 */
export function traceSettling(deps: { sql: Sql; settles: Producer<'trace-settle'> }) {
  const projects = new LRUCache<string, Map<string, number>>({
    max: 10_000,
    ttl: RULES_CACHE_MS,
    fetchMethod: async (organizationId) =>
      new Map((await liveRuleProjects(deps.sql, [organizationId])).map((p) => [p.project_id, p.settle_seconds * 1000])),
  });
  return {
    async watch(traces: readonly WrittenTrace[]) {
      for (const t of traces) {
        const settleMs = (await projects.fetch(t.organization_id))?.get(t.project_id);
        if (settleMs === undefined) continue;
        await deps.settles.add(t, {
          delay: settleMs,
          deduplication: { id: `${t.organization_id}:${t.root_trace_id}`, reschedule: true, keepLastIfActive: true },
        });
      }
    },
  };
}
export type TraceSettling = ReturnType<typeof traceSettling>;

/**
 * A settled trace: each enabled rule of its project that samples it, whose filters its root matches and
 * whose day's spend is under its limit, claims its target spans and queues their evaluation. The claim
 * makes this idempotent: a job run again (retried, redelivered, or a later settle of the same trace)
 * queues only what was never evaluated, or what changed since, for a rule that reevaluates.
 */
export function traceSettleProcessor(deps: { sql: Sql; evals: Producer<'eval'> }): Processor<'trace-settle'> {
  return async (job) => {
    const rules = await liveRulesOf(deps.sql, job.organization_id, job.project_id);
    if (!rules.length) return;
    const root = await settledRoot(deps.sql, job.organization_id, job.root_trace_id);
    // A root that has not ended is settled again on the write that ends it.
    if (!root?.ended || root.experiment) return;
    for (const rule of rules) {
      if (rule.paused_until || !isSampledIn(`${job.root_trace_id}:${rule.id}`, rule.sample_rate)) continue;
      const targets = await ruleTargets(deps.sql, rule, job.root_trace_id);
      for (const run of await claimRuleRuns(deps.sql, rule, job.root_trace_id, targets)) {
        await deps.evals.add(
          {
            organization_id: job.organization_id,
            trace_id: run.trace_id,
            metric_names: rule.metric_names,
            rule: { id: rule.id, generation: run.generation },
          },
          { jobId: `rule-${rule.id}-${run.trace_id}-${run.generation}` },
        );
      }
    }
  };
}
