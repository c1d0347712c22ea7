import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { repeat } from '@sightline/runtime';
import { forgetLostSpanEvents } from './backlog';
import type { RedisKeys } from './keys';
import { clearPending, pendingEventsOf, releaseForgottenMarks } from './pending-marks';
import { recoverKeptLogs, sweepUnconfirmed } from './reservations';

type Log = { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };

const SWEEP_MS = 10_000;
const FORGET_MS = 5000;

/**
 * The one owner of the pending marks' upkeep, run by each worker process beside its span-write worker. The
 * marks of span events that will never be written go, so that reads stop waiting for them and the backlog
 * does not drift:
 * - a span-write job that failed for good (retries used up, stalled too often, a payload that cannot
 *   parse): its events' marks at once, rather than when they expire;
 * - reservations whose job never reached the queue: swept every 10 s, after their grace; those that kept
 *   their events (a completion's log its worker did not write) are queued instead, marks kept;
 * - jobs queued and then lost (a queue emptied by hand, a failover): once no job is left, their events
 *   leave the backlog, then their marks go.
 * Answers a stop function.
 */
export function startPendingUpkeep(deps: {
  redis: Redis;
  keys: RedisKeys;
  spanWrites: Queue;
  spanWriter: Worker;
  log: Log;
  describeJob?: (data: unknown) => object;
}): () => void {
  const { redis, keys, log } = deps;
  // `finishedOn` is set only when a job has failed for good, not on an attempt that will be retried.
  const onFailed = (job: { id?: string; data: unknown; finishedOn?: number } | undefined) => {
    if (!job?.finishedOn) return;
    clearPending(redis, keys, pendingEventsOf(job.data)).catch((err: Error) =>
      log.warn(
        { err: err.message, jobId: job.id, ...deps.describeJob?.(job.data) },
        'could not release the pending marks of a failed job',
      ),
    );
  };
  deps.spanWriter.on('failed', onFailed);
  const recover = async () => {
    const queued = await recoverKeptLogs(redis, keys, deps.spanWrites);
    if (queued) log.warn({ queued }, 'queued completion logs that their worker did not write');
  };
  const stopSweeping = repeat(
    async () => {
      await recover();
      const released = await sweepUnconfirmed(redis, keys);
      if (released) log.warn({ released }, 'released pending marks of span events whose job was never queued');
    },
    SWEEP_MS,
    (err) => log.debug({ err: (err as Error).message }, 'pending sweep failed'),
  );
  const stopForgetting = repeat(
    async () => {
      // Kept logs older than the grace become jobs first: the events of a queue with no job are taken as lost.
      await recover();
      await forgetLostSpanEvents(redis, keys, deps.spanWrites);
      const released = await releaseForgottenMarks(redis, keys);
      if (released) log.warn({ released }, 'released pending marks of span events whose job was lost');
    },
    FORGET_MS,
    (err) => log.debug({ err: (err as Error).message }, 'span backlog check failed'),
  );
  return () => {
    deps.spanWriter.off('failed', onFailed);
    stopSweeping();
    stopForgetting();
  };
}
