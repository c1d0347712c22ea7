import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Sql } from '@sightline/db';
import { createProducer, createSpanIntake, redisKeys } from '@sightline/queues';
import type { WorkerEnv } from '@sightline/schemas';
import { createPool } from '@sightline/pool';
import { completionProcessor } from './processors/completion.processor';
import { evalProcessor } from './processors/eval.processor';
import { experimentFinalizeProcessor } from './processors/experiment-finalize.processor';
import { spanWriteProcessor } from './processors/span-write.processor';
import { registerWorker } from './register-worker';

export type WorkerDeps = { sql: Sql; redis: Redis; env: WorkerEnv; log: Logger; providerEnv?: NodeJS.ProcessEnv };

/** Starts one BullMQ worker per queue; `close` lets each finish what it holds, then closes the producers. */
export function startWorkers({ sql, redis, env, log, providerEnv = process.env }: WorkerDeps) {
  const prefix = env.QUEUE_PREFIX;
  const keys = redisKeys(prefix);
  const spanWrites = createProducer('span-write', redis, prefix);
  const pool = createPool({ threads: env.POOL_THREADS });
  const evals = createProducer('eval', redis, prefix);
  const runCompletion = completionProcessor({
    sql,
    redis,
    keys,
    spans: createSpanIntake(redis, spanWrites, keys),
    log,
    env: providerEnv,
    secretsKey: env.SECRETS_KEY,
    timeoutMs: env.COMPLETION_TIMEOUT_MS,
    maxRetries: env.PROVIDER_MAX_RETRIES,
    cacheTtlSeconds: env.COMPLETION_CACHE_TTL_SECONDS,
  });
  const options = { connection: redis, prefix, log };
  const workers = [
    registerWorker('span-write', spanWriteProcessor({ sql, redis, keys, batchSize: env.SPAN_BATCH_SIZE, log, evals }), { ...options, concurrency: env.WORKER_CONCURRENCY }),
    // A stalled completion is failed, never run again: the provider must not be called twice.
    registerWorker('completion', runCompletion, { ...options, concurrency: env.COMPLETION_CONCURRENCY, maxStalledCount: 0 }),
    registerWorker('eval', evalProcessor({ sql, redis, keys, log, runCompletion }), { ...options, concurrency: env.COMPLETION_CONCURRENCY }),
    registerWorker('experiment-finalize', experimentFinalizeProcessor({ sql, redis, keys, pool, log }), { ...options, concurrency: 4 }),
  ];
  return {
    names: workers.map((w) => w.name),
    /** Tasks the worker's thread pool has finished. */
    poolTasks: () => pool.completedTasks(),
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([spanWrites.close(), evals.close()]);
      await pool.close();
    },
  };
}
