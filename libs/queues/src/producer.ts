import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { queues, type QueueName, type QueuePayload } from './registry';

/**
 * One generic producer per queue. Payloads are typed here and validated by the worker (registerWorker),
 * which fails a bad job without retries; validating them here too cost the API a tenth of its CPU per span.
 */
export function createProducer<N extends QueueName>(name: N, connection: Redis, prefix: string) {
  const queue = new Queue(name, { connection, prefix, defaultJobOptions: queues[name].options });
  return {
    queue,
    /** The queue's Redis connection, which BullMQ uses as given (shared) for the jobs it adds. */
    connection,
    /**
     * `jobId` makes adding idempotent: a job with an id that is still queued is not added again.
     * `deduplication` with `delay` debounces: one delayed job per id, pushed back by each add.
     */
    async add(payload: QueuePayload<N>, options: Pick<JobsOptions, 'jobId' | 'delay' | 'deduplication'> = {}) {
      return queue.add(name, payload, options);
    },
    /** Many jobs in one round trip, each with its own options (a `jobId` each, for idempotence). */
    async addBulk(
      jobs: { payload: QueuePayload<N>; options?: Pick<JobsOptions, 'jobId' | 'delay' | 'deduplication'> }[],
    ) {
      return queue.addBulk(jobs.map((j) => ({ name, data: j.payload, opts: j.options })));
    },
    close: () => queue.close(),
  };
}
export type Producer<N extends QueueName> = ReturnType<typeof createProducer<N>>;
