import { isSampledIn } from '@sightline/core';
import { advanceBackfill, backfillPage, claimRuleRuns, findBackfill, ruleSettings, ruleTargets } from '@sightline/db';
import type { Processor } from '../register-worker';
import { carryOutRuns, type RunDeps } from './rule-runs';

/**
 * Walks a backfill's range a page of roots at a time from its cursor, claiming the rule's runs as live
 * traffic does (so that nothing is evaluated twice, by the backfill or beside it), and carrying them out.
 * Killed mid-page, the job is run again (redelivered) and resumes at the last page committed: the runs
 * it had claimed and not finished are carried out then.
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
      const roots = page
        .filter((r) => r.eligible && isSampledIn(`${r.trace_id}:${rule.id}`, rule.sample_rate))
        .map((r) => r.trace_id);
      const runs = await claimRuleRuns(deps.sql, rule, await ruleTargets(deps.sql, rule, roots));
      await carryOutRuns(deps, rule, runs, backfill.id);
      await advanceBackfill(deps.sql, backfill.id, page.at(-1)!, page.length);
    }
  };
}
