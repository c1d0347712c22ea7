import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queues, type QueueName, type QueuePayload } from './registry';

/** One generic producer per queue: validates the payload before it is added, so bad jobs never reach Redis. */
export function createProducer<N extends QueueName>(name: N, connection: Redis, prefix: string) {
  const queue = new Queue(name, { connection, prefix, defaultJobOptions: queues[name].options });
  return {
    queue,
    /** `jobId` makes adding idempotent: a job with an id that is still queued is not added again. */
    async add(payload: QueuePayload<N>, options: { jobId?: string } = {}) {
      const data = queues[name].schema.parse(payload);
      return queue.add(name, data, options);
    },
    close: () => queue.close(),
  };
}
export type Producer<N extends QueueName> = ReturnType<typeof createProducer<N>>;
