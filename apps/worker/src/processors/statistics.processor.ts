import type { Queue } from 'bullmq';
import { analyzeChangedTables, type Sql } from '@sightline/db';
import { queues } from '@sightline/queues';
import type { StatisticsJob } from '@sightline/schemas';
import type { Processor } from '../register-worker';

const STATISTICS_SCHEDULER_ID = 'statistics';
/**
 * How often the span tables' statistics are checked, and how much change makes them stale: while spans
 * arrive, the planner's picture of the table is at most about this old (see @sightline/db's statistics.ts).
 */
const STATISTICS_EVERY_MS = 30_000;
const MIN_CHANGED_ROWS = 10_000;

/** Analyzes the span tables that changed enough since their last analysis. */
export function statisticsProcessor(deps: { sql: Sql }): Processor<'statistics'> {
  return async (job, _bullJob, log) => {
    const analyzed = await analyzeChangedTables(deps.sql, job.min_changed_rows);
    if (analyzed.length) log.info({ analyzed }, 'table statistics refreshed');
    return { analyzed };
  };
}

/**
 * One job scheduler for the deployment, whichever worker upserts it (each does at start, with the same
 * settings); a global concurrency of 1 keeps two workers from analyzing at once.
 */
export async function scheduleStatistics(queue: Queue): Promise<void> {
  const data: StatisticsJob = { min_changed_rows: MIN_CHANGED_ROWS };
  await queue.setGlobalConcurrency(1);
  await queue.upsertJobScheduler(
    STATISTICS_SCHEDULER_ID,
    { every: STATISTICS_EVERY_MS },
    { name: 'statistics', data, opts: queues.statistics.options },
  );
}
