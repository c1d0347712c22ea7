import type { Queue } from 'bullmq';
import { deleteExpiredAuditEntries, deleteExpiredTraces, type Sql } from '@sightline/db';
import { scheduleEvery } from '@sightline/queues';
import { RetentionJobSchema, type RetentionJob, type WorkerEnv } from '@sightline/schemas';
import type { Processor } from '../register-worker';

/** How often the retention job runs; each run removes everything expired by then. */
const RETENTION_EVERY_MS = 10 * 60_000;

/**
 * Removes expired traces, and audit log entries as old (the log is retained like traces); stops early (the
 * next run goes on) when the worker is shutting down.
 */
export function retentionProcessor(deps: { sql: Sql; shouldStop: () => boolean }): Processor<'retention'> {
  return async (job, _bullJob, log) => {
    const result = await deleteExpiredTraces(deps.sql, {
      days: job.retention_days,
      batchSize: job.batch_size,
      shouldStop: deps.shouldStop,
    });
    const auditEntries = await deleteExpiredAuditEntries(deps.sql, {
      days: job.retention_days,
      batchSize: job.batch_size,
      shouldStop: deps.shouldStop,
    });
    log.info({ ...result, auditEntries }, 'expired traces removed');
    return { ...result, auditEntries };
  };
}

/**
 * The queue's one job scheduler is the deployment's retention setting, and a worker's RETENTION_DAYS
 * changes it when the worker starts: a number of days upserts it, 0 removes it, and a worker started
 * without the variable leaves it as it is (so one worker deployed without it neither turns retention off
 * nor keeps it from running: every worker runs the jobs, which carry their settings). Two runs at once
 * would only repeat each other's deletes, which scheduleEvery's global concurrency of 1 prevents.
 */
export async function scheduleRetention(
  queue: Queue,
  env: Pick<WorkerEnv, 'RETENTION_DAYS' | 'RETENTION_BATCH_SIZE'>,
): Promise<RetentionJob | null> {
  if (env.RETENTION_DAYS === 0) {
    await queue.removeJobScheduler('retention');
  } else if (env.RETENTION_DAYS !== undefined) {
    const data = RetentionJobSchema.parse({ retention_days: env.RETENTION_DAYS, batch_size: env.RETENTION_BATCH_SIZE });
    await scheduleEvery(queue, 'retention', RETENTION_EVERY_MS, data);
  }
  // The setting in force, whoever set it: what the worker logs at start.
  const data = (await queue.getJobScheduler('retention'))?.template?.data;
  return data ? RetentionJobSchema.parse(data) : null;
}
