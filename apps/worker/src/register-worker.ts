import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createReplier, queues, redisKeys, RETRY_BACKOFF_TYPE, retryDelayMs, type QueueName, type QueuePayload } from '@sightline/queues';

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
  return ids.length > MAX_LOGGED_REQUEST_IDS ? { reqIds: ids.slice(0, MAX_LOGGED_REQUEST_IDS), reqIdCount: ids.length } : { reqIds: ids };
}

// When a worker dies, the jobs it held are found by another worker's stalled-job check once their locks
// lapse (lockDuration, checked every stalledInterval): with BullMQ's defaults (30 s, 30 s) that takes up
// to a minute and a half, during which reads of their spans wait and answer 503. Locks are renewed at
// half their duration, in one call for all of a worker's jobs, so shorter ones cost little. Span events
// fold idempotently and evaluations and finishes can run again, so those jobs are redelivered, several
// times: with BullMQ's default of one, a job held at two crashes (a worker killed while still catching
// up) would fail and its spans be lost. A completion is never run twice (see workers.ts) and its caller
// is waiting, so its stall is found sooner still.
const STALLS: Partial<Record<QueueName, { lockDuration: number; stalledInterval: number }>> = { completion: { lockDuration: 10_000, stalledInterval: 5_000 } };
const DEFAULT_STALLS = { lockDuration: 15_000, stalledInterval: 10_000 };
const DEFAULT_MAX_STALLED = 5;
/** BullMQ's failure reason for a job stalled more than maxStalledCount times, raised when a worker next takes it. */
const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';

/**
 * The one way to start a BullMQ worker: re-validates every payload (a payload that does not parse can
 * never succeed, so it fails without retries), applies the shared retry backoff, and logs failures.
 */
export function registerWorker<N extends QueueName>(
  name: N,
  processor: Processor<N>,
  { connection, prefix, concurrency, log, maxStalledCount }: { connection: Redis; prefix: string; concurrency: number; log: Logger; maxStalledCount?: number },
): Worker {
  const worker = new Worker(
    name,
    async (job) => {
      const parsed = queues[name].schema.safeParse(job.data);
      if (!parsed.success) {
        // A caller waiting on this job hears of the failure now rather than at its timeout.
        const replyTo = (job.data as { reply_to?: unknown } | null)?.reply_to;
        if (typeof replyTo === 'string') await createReplier(connection, redisKeys(prefix), replyTo)({ error: `invalid ${name} job`, status: 500 });
        throw new UnrecoverableError(`invalid ${name} payload: ${parsed.error.message}`);
      }
      return processor(parsed.data as QueuePayload<N>, job, log.child({ queue: name, jobId: job.id, ...requestIdsOf(parsed.data) }));
    },
    {
      connection,
      prefix,
      concurrency,
      maxStalledCount: maxStalledCount ?? DEFAULT_MAX_STALLED,
      ...(STALLS[name] ?? DEFAULT_STALLS),
      settings: { backoffStrategy: (attemptsMade, type) => (type === RETRY_BACKOFF_TYPE ? retryDelayMs(attemptsMade) : 1000) },
    },
  );
  worker.on('failed', (job, err) => {
    log.warn({ queue: name, jobId: job?.id, ...requestIdsOf(job?.data), attempts: job?.attemptsMade, err: err.message }, 'job failed');
    // Failed for stalling, the job never reached the processor above, which answers its caller: without
    // this, a caller waiting on a job whose worker died would hear nothing until its own timeout.
    const replyTo = (job?.data as { reply_to?: unknown } | undefined)?.reply_to;
    if (err.message === STALLED_TOO_OFTEN && typeof replyTo === 'string') {
      const message = `the worker running this ${name} job stopped before it finished; it is not run again${name === 'completion' ? ', so that the provider is called at most once per request' : ''}`;
      createReplier(connection, redisKeys(prefix), replyTo)({ error: message, status: 503 }).catch(() => {});
    }
  });
  worker.on('error', (err) => log.error({ queue: name, err: err.message }, 'worker error'));
  worker.on('stalled', async (jobId) => {
    const job = await Job.fromId(worker, jobId).catch(() => undefined);
    log.warn({ queue: name, jobId, ...requestIdsOf(job?.data) }, 'job stalled: its worker stopped answering');
  });
  return worker;
}
