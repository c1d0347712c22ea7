import type { Queue } from 'bullmq';
import { foldTraceGroups, foldTraceHours, type Sql } from '@sightline/db';
import { scheduleEvery } from '@sightline/queues';
import type { Processor } from '../register-worker';

/**
 * How often the roots' changes are folded into the dashboard's hours and the sessions' and users' sums. Their
 * readers add the changes not folded yet, each at some cost (about 9 µs for the dashboard,
 * docs/benchmarks-notes.md): a few seconds' worth keeps that small.
 */
const TRACE_HOURS_EVERY_MS = 5_000;
/** Changes folded per transaction, so that a backlog (retention's deletes) holds no lock for long. */
const CHUNK = 50_000;

/**
 * Folds the roots' changes into trace_hours and trace_groups, chunk by chunk, until none is left or the worker is
 * closing. One job for both: they are written by the same root's changes, and read by the console's pages.
 */
export function traceHoursProcessor(deps: { sql: Sql; shouldStop: () => boolean }): Processor<'trace-hours'> {
  return async (job, _bullJob, log) => {
    const options = { chunk: job.chunk, shouldStop: deps.shouldStop };
    const folded = await foldTraceHours(deps.sql, options);
    const groups = await foldTraceGroups(deps.sql, options);
    if (folded >= job.chunk || groups >= job.chunk)
      log.info({ folded, groups }, "roots' changes folded into their sums");
    return { folded, groups };
  };
}

/** Every worker schedules it at start, with the same settings: one scheduler for the deployment. */
export const scheduleTraceHours = (queue: Queue) =>
  scheduleEvery(queue, 'trace-hours', TRACE_HOURS_EVERY_MS, { chunk: CHUNK });
