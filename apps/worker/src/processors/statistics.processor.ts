import type { Queue } from 'bullmq';
import { analyzeChangedTables, ensureSpanPartitions, type Sql } from '@sightline/db';
import { scheduleEvery } from '@sightline/queues';
import type { Processor } from '../register-worker';

/**
 * How often the span tables' statistics are checked, and how much change makes them stale: while spans
 * arrive, the planner's picture of the table is at most about this old (see @sightline/db's statistics.ts).
 */
const STATISTICS_EVERY_MS = 30_000;
const MIN_CHANGED_ROWS = 10_000;

/**
 * Analyzes the span tables that changed enough since their last analysis, and makes the partitions of the
 * days ahead that are missing (this job runs in every deployment, with or without retention).
 */
export function statisticsProcessor(deps: { sql: Sql }): Processor<'statistics'> {
  return async (job, _bullJob, log) => {
    const partitions = await ensureSpanPartitions(deps.sql);
    if (partitions.length) log.info({ partitions }, 'span partitions made');
    const analyzed = await analyzeChangedTables(deps.sql, job.min_changed_rows);
    if (analyzed.length) log.info({ analyzed }, 'table statistics refreshed');
    return { analyzed, partitions };
  };
}

/** Every worker schedules it at start, with the same settings: one scheduler for the deployment. */
export const scheduleStatistics = (queue: Queue) =>
  scheduleEvery(queue, 'statistics', STATISTICS_EVERY_MS, { min_changed_rows: MIN_CHANGED_ROWS });
