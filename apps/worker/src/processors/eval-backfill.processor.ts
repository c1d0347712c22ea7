import { isSampledIn } from '@sightline/core';
import {
  advanceBackfill,
  backfillPage,
  claimRuleRuns,
  findBackfill,
  findEvalMetrics,
  ruleSettings,
  ruleTargets,
  scoreBackfillPage,
} from '@sightline/db';
import { takeWatermark } from '@sightline/queues';
import type { Processor } from '../register-worker';
import { carryOutRuns, scorer, type RunDeps } from './rule-runs';

/**
 * Walks a backfill's range a page of roots at a time from its cursor, claiming the rule's runs as live
 * traffic does (so that nothing is evaluated twice, by the backfill or beside it), and carrying them out.
 * A rule without a judge is carried out a page in one transaction with the move of the cursor; a rule with
 * one has its runs claimed, then queued, then the cursor moved. Killed mid-page, the job is run again
 * (redelivered) and resumes at the last page committed: runs claimed and not finished are carried out then.
 */
export function evalBackfillProcessor(deps: RunDeps & { pageSize: number }): Processor<'eval-backfill'> {
  return async (job) => {
    for (;;) {
      const backfill = await findBackfill(deps.sql, job.organization_id, job.backfill_id);
      if (backfill?.status !== 'running') return;
      const [rule] = await ruleSettings(deps.sql, job.organization_id, backfill.rule_id);
      if (!rule) return;
      const page = await backfillPage(deps.sql, backfill, rule, deps.pageSize);
      if (!page.length) return void (await advanceBackfill(deps.sql, backfill.id, null, 0));
      const last = page.at(-1)!;
      const roots = page
        .filter((r) => r.eligible && isSampledIn(`${r.trace_id}:${rule.id}`, rule.sample_rate))
        .map((r) => r.trace_id);
      // The page read each root's filters already: a rule on roots targets those eligible.
      const spans =
        rule.target.kind === 'root'
          ? roots.map((id) => ({ trace_id: id, root_trace_id: id }))
          : await ruleTargets(deps.sql, rule, roots);
      const metrics = await findEvalMetrics(deps.sql, rule.organization_id, { names: rule.metric_names });
      if (metrics.some((m) => m.type === 'llm_judge')) {
        await carryOutRuns(deps, rule, await claimRuleRuns(deps.sql, rule, spans), backfill.id);
      } else {
        // Numbered before the spans are read: a later update's evaluation, reading newer data, outranks this one.
        const seq = await takeWatermark(deps.redis, deps.keys);
        const score = scorer(rule, metrics);
        const left = await scoreBackfillPage(deps.sql, {
          backfill,
          rule,
          spans,
          last,
          walked: page.length,
          seq,
          score,
        });
        // The page is written and the cursor moved past it, unless some runs were left to carry out apart.
        if (!left.length) continue;
        await carryOutRuns(deps, rule, left, backfill.id);
      }
      await advanceBackfill(deps.sql, backfill.id, last, page.length);
    }
  };
}
