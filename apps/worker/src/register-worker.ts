import { ErrorCode, Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  createReplier,
  DELIVERY_BACKOFF_TYPE,
  deliveryDelayMs,
  queues,
  redisKeys,
  RETRY_BACKOFF_TYPE,
  retryDelayMs,
  type QueueName,
  type QueuePayload,
} from '@sightline/queues';
import { isConnectionError } from '@sightline/runtime';
import type { WorkerEnv } from '@sightline/schemas';

/** `log` carries the job's queue, id and the x-request-id(s) of the API requests it came from. */
export type Processor<N extends QueueName> = (payload: QueuePayload<N>, job: Job, log: Logger) => Promise<unknown>;

/** Request ids named on one log line at most: a span-write job can hold the spans of 1000 requests. */
const MAX_LOGGED_REQUEST_IDS = 20;

/** The request ids a job came from: one for most jobs; a span-write job holds the events of many requests. */
export function requestIdsOf(data: unknown): { reqId?: string; reqIds?: string[]; reqIdCount?: number } {
  const job = data as { request_id?: unknown; events?: { request_id?: unknown }[] } | null | undefined;
  if (typeof job?.request_id === 'string') return { reqId: job.request_id };
  if (!Array.isArray(job?.events)) return {};
  const ids = [...new Set(job.events.map((e) => e?.request_id).filter((id): id is string => typeof id === 'string'))];
  if (ids.length <= 1) return ids.length ? { reqId: ids[0] } : {};
  return ids.length > MAX_LOGGED_REQUEST_IDS
    ? { reqIds: ids.slice(0, MAX_LOGGED_REQUEST_IDS), reqIdCount: ids.length }
    : { reqIds: ids };
}

/**
 * Redis that stops while a worker ends a job may have run the worker's command and not sent its answer;
 * ioredis sends that command again once it reconnects, and the job, already ended and removed, is gone.
 * A Redis that came back without its data (no append-only file) gives the same answer for a job it lost.
 */
const JOB_GONE =
  'a job ended while Redis was away is no longer in Redis: it was ended before the connection dropped, ' +
  'or Redis came back without its data';

/** The id of the job a BullMQ error says Redis no longer holds, if that is what it says. */
function jobGone(err: Error): string | undefined {
  if ((err as { code?: unknown }).code !== ErrorCode.JobNotExist) return undefined;
  return /^Missing key for job (.+?)\. /.exec(err.message)?.[1];
}

/** BullMQ's failure reason for a job stalled more than maxStalledCount times, raised when a worker next takes it. */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

type WorkerOptions = {
  connection: Redis;
  prefix: string;
  env: WorkerEnv;
  log: Logger;
  /** Another queue with this one's payloads and settings (a completion lane's), by its name. */
  queueName?: string;
  /** Lets the queue be paused for every worker (`queue.rateLimit`), which BullMQ honours only with a limiter. */
  limiter?: { max: number; duration: number };
};

/**
 * The one way to start a BullMQ worker, as the queue's registry entry says: re-validates every payload (a
 * payload that does not parse can never succeed, so it fails without retries), applies the shared retry
 * backoff, and logs failures.
 */
export function registerWorker<N extends QueueName>(
  name: N,
  processor: Processor<N>,
  { connection, prefix, env, log, queueName = name, limiter }: WorkerOptions,
): Worker {
  const entry: (typeof queues)[QueueName] = queues[name];
  const { concurrency, ...stalls } = entry.worker;
  const worker = new Worker(
    queueName,
    async (job) => {
      const parsed = queues[name].schema.safeParse(job.data);
      if (!parsed.success) {
        // A caller waiting on this job hears of the failure now rather than at its timeout.
        const replyTo = (job.data as { reply_to?: unknown } | null)?.reply_to;
        if (typeof replyTo === 'string')
          await createReplier(connection, redisKeys(prefix), replyTo)({ error: `invalid ${name} job`, status: 500 });
        throw new UnrecoverableError(`invalid ${name} payload: ${parsed.error.message}`);
      }
      return processor(
        parsed.data as QueuePayload<N>,
        job,
        log.child({ queue: queueName, jobId: job.id, ...requestIdsOf(parsed.data) }),
      );
    },
    {
      connection,
      prefix,
      concurrency: concurrency(env),
      ...stalls,
      limiter,
      settings: {
        backoffStrategy: (attemptsMade, type) =>
          type === RETRY_BACKOFF_TYPE
            ? retryDelayMs(attemptsMade)
            : type === DELIVERY_BACKOFF_TYPE
              ? deliveryDelayMs(attemptsMade, env.MONITOR_RETRY_BASE_MS)
              : 1000,
      },
    },
  );
  worker.on('failed', (job, err) => {
    log.warn(
      { queue: queueName, jobId: job?.id, ...requestIdsOf(job?.data), attempts: job?.attemptsMade, err: err.message },
      'job failed',
    );
    // Failed for stalling, the job never reached the processor above, which answers its caller: without
    // this, a caller waiting on a job whose worker died would hear nothing until its own timeout.
    const replyTo = (job?.data as { reply_to?: unknown } | undefined)?.reply_to;
    if (err.message === STALLED_TOO_OFTEN && typeof replyTo === 'string') {
      const because = 'notRunAgainBecause' in entry ? `, ${entry.notRunAgainBecause}` : '';
      const message = `the worker running this ${name} job stopped before it finished; it is not run again${because}`;
      createReplier(connection, redisKeys(prefix), replyTo)({ error: message, status: 503 }).catch(() => {});
    }
  });
  // BullMQ repeats here every error of the connections it made from `connection`, at each reconnection
  // attempt: the process's watcher of `connection` reports an outage once (see main.ts).
  let lastGone: string | undefined;
  worker.on('error', (err) => {
    if (isConnectionError(err)) return;
    const gone = jobGone(err);
    if (gone === undefined) {
      log.error({ queue: queueName, err: err.message }, 'worker error');
      return;
    }
    // BullMQ then fails the job it could not end, and hears the same answer: one line a job.
    if (gone !== lastGone) log.warn({ queue: queueName, jobId: gone }, JOB_GONE);
    lastGone = gone;
  });
  worker.on('stalled', async (jobId) => {
    const job = await Job.fromId(worker, jobId).catch(() => undefined);
    log.warn({ queue: queueName, jobId, ...requestIdsOf(job?.data) }, 'job stalled: its worker stopped answering');
  });
  return worker;
}
