import type { Queue } from 'bullmq';
import { foldTraceHours, type Sql } from '@sightline/db';
import { scheduleEvery } from '@sightline/queues';
import type { Processor } from '../register-worker';

/**
 * How often the roots' changes are folded into the dashboard's hours. The dashboard adds the changes not folded
 * yet, each at some cost (about 9 µs, docs/benchmarks-notes.md): a few seconds' worth keeps that small.
 */
const TRACE_HOURS_EVERY_MS = 5_000;
/** Changes folded per transaction, so that a backlog (retention's deletes) holds no lock for long. */
const CHUNK = 50_000;

/** Folds the roots' changes into trace_hours, chunk by chunk, until none is left or the worker is closing. */
export function traceHoursProcessor(deps: { sql: Sql; shouldStop: () => boolean }): Processor<'trace-hours'> {
  return async (job, _bullJob, log) => {
    const folded = await foldTraceHours(deps.sql, { chunk: job.chunk, shouldStop: deps.shouldStop });
    if (folded >= job.chunk) log.info({ folded }, "roots' changes folded into the dashboard's hours");
    return { folded };
  };
}

/** Every worker schedules it at start, with the same settings: one scheduler for the deployment. */
export const scheduleTraceHours = (queue: Queue) =>
  scheduleEvery(queue, 'trace-hours', TRACE_HOURS_EVERY_MS, { chunk: CHUNK });
