import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sql } from '@sightline/db';
import { redisKeys } from '@sightline/queues';
import { spanWriteProcessor } from './processors/span-write.processor';
import { registerWorker } from './register-worker';

export type WorkerDeps = { sql: Sql; redis: Redis; prefix: string; concurrency: number; spanBatchSize: number; log: Logger };

/** Starts one BullMQ worker per queue; `close` lets each finish its running batch. */
export function startWorkers({ sql, redis, prefix, concurrency, spanBatchSize, log }: WorkerDeps) {
  const keys = redisKeys(prefix);
  const options = { connection: redis, prefix, concurrency, log };
  const workers = [registerWorker('span-write', spanWriteProcessor({ sql, redis, keys, batchSize: spanBatchSize }), options)];
  return {
    names: workers.map((w) => w.name),
    close: () => Promise.all(workers.map((w) => w.close())),
  };
}
