import { LRUCache } from 'lru-cache';
import { createBatcher, isSampledIn } from '@sightline/core';
import {
  claimRuleRuns,
  liveRuleProjects,
  liveRulesOf,
  ruleTargets,
  settlingRoots,
  type RuleSettings,
  type Sql,
  type WrittenTrace,
} from '@sightline/db';
import type { Producer } from '@sightline/queues';
import type { TraceSettleJob } from '@sightline/schemas';
import type { Processor } from '../register-worker';
import { carryOutRuns, type RunDeps } from './rule-runs';

/** How long the span writer trusts what it read of an organization's rules: a rule saved takes effect within it. */
export const RULES_CACHE_MS = 2000;

const dedupId = (t: { organization_id: string; root_trace_id: string }) => `${t.organization_id}:${t.root_trace_id}`;

/**
 * For the span writer: each written trace of a project with enabled rules gets one settle job, due once
 * the trace has been quiet for the rules' settle time. BullMQ's deduplication keeps one job per trace, and
 * a write while it runs keeps one more for afterwards. The job is pushed back by a later write only when
 * this writer has not pushed it back in the last half settle time: the spans of a trace arrive together,
 * and the job itself checks the trace's last change in PostgreSQL and waits again if it came too soon.
 */
export function traceSettling(deps: { sql: Sql; settles: Producer<'trace-settle'> }) {
  const projects = new LRUCache<string, Map<string, number>>({
    max: 10_000,
    ttl: RULES_CACHE_MS,
    fetchMethod: async (organizationId) =>
      new Map((await liveRuleProjects(deps.sql, [organizationId])).map((p) => [p.project_id, p.settle_seconds * 1000])),
  });
  const pushedBack = new LRUCache<string, true>({ max: 100_000, ttlAutopurge: false });
  return {
    async watch(traces: readonly WrittenTrace[]) {
      const jobs = [];
      for (const t of traces) {
        const settleMs = (await projects.fetch(t.organization_id))?.get(t.project_id);
        if (settleMs === undefined || pushedBack.has(dedupId(t))) continue;
        pushedBack.set(dedupId(t), true, { ttl: Math.max(1, settleMs / 2) });
        jobs.push({ payload: t, options: settleOptions(t, settleMs) });
      }
      if (jobs.length) await deps.settles.addBulk(jobs);
    },
  };
}
export type TraceSettling = ReturnType<typeof traceSettling>;

const settleOptions = (t: TraceSettleJob, delayMs: number) => ({
  delay: delayMs,
  deduplication: { id: dedupId(t), reschedule: true, keepLastIfActive: true },
});

/** Settle jobs carried out together: a few queries for many traces. */
const SETTLE_BATCH = 500;

/**
 * Settled traces, many at a time: for each enabled rule of their project whose day's spend is under its
 * limit, the traces it samples and whose root matches its filters claim their target spans, and the runs
 * are carried out. A trace that changed within the settle time is settled again later; one whose root
 * has not ended is settled again by the write that ends it. The claim makes this idempotent: a job run
 * again (retried, redelivered, or a later settle of the same trace) carries out only what was never
 * evaluated, or what changed since, for a rule that reevaluates.
 */
export function traceSettleProcessor(deps: RunDeps & { settles: Producer<'trace-settle'> }): Processor<'trace-settle'> {
  const batcher = createBatcher<TraceSettleJob>((jobs) => settle(deps, jobs), { maxItems: SETTLE_BATCH, lingerMs: 5 });
  return (job) => batcher.add([job]);
}

async function settle(deps: RunDeps & { settles: Producer<'trace-settle'> }, jobs: TraceSettleJob[]) {
  const byProject = new Map<string, TraceSettleJob[]>();
  for (const j of jobs)
    byProject.set(`${j.organization_id}/${j.project_id}`, [
      ...(byProject.get(`${j.organization_id}/${j.project_id}`) ?? []),
      j,
    ]);
  for (const group of byProject.values()) {
    const [{ organization_id, project_id }] = group;
    const rules = await liveRulesOf(deps.sql, organization_id, project_id);
    if (!rules.length) continue;
    const settleSeconds = Math.max(...rules.map((r) => r.settle_seconds));
    const roots = await settlingRoots(deps.sql, organization_id, [...new Set(group.map((j) => j.root_trace_id))]);
    const early = roots.filter((r) => r.quiet_seconds < settleSeconds);
    if (early.length)
      await deps.settles.addBulk(
        early.map((r) => {
          const payload = { organization_id, project_id, root_trace_id: r.trace_id };
          return { payload, options: settleOptions(payload, Math.ceil((settleSeconds - r.quiet_seconds) * 1000)) };
        }),
      );
    const settled = roots
      .filter((r) => r.ended && !r.experiment && r.quiet_seconds >= settleSeconds)
      .map((r) => r.trace_id);
    for (const rule of rules) await runRule(deps, rule, settled);
  }
}

async function runRule(deps: RunDeps, rule: RuleSettings, roots: string[]) {
  if (rule.paused_until) return;
  const sampled = roots.filter((root) => isSampledIn(`${root}:${rule.id}`, rule.sample_rate));
  const runs = await claimRuleRuns(deps.sql, rule, await ruleTargets(deps.sql, rule, sampled));
  await carryOutRuns(deps, rule, runs);
}
