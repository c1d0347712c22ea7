import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createReplier, queues, redisKeys, RETRY_BACKOFF_TYPE, retryDelayMs, type QueueName, type QueuePayload } from '@sightline/queues';

export type Processor<N extends QueueName> = (payload: QueuePayload<N>, job: Job) => Promise<unknown>;

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
      return processor(parsed.data as QueuePayload<N>, job);
    },
    {
      connection,
      prefix,
      concurrency,
      ...(maxStalledCount !== undefined && { maxStalledCount }),
      settings: { backoffStrategy: (attemptsMade, type) => (type === RETRY_BACKOFF_TYPE ? retryDelayMs(attemptsMade) : 1000) },
    },
  );
  worker.on('failed', (job, err) => log.warn({ queue: name, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'));
  worker.on('error', (err) => log.error({ queue: name, err: err.message }, 'worker error'));
  worker.on('stalled', (jobId) => log.warn({ queue: name, jobId }, 'job stalled: its worker stopped answering'));
  return worker;
}
