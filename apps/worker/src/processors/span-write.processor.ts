import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { applySpanEvents, type Sql } from '@sightline/db';
import { clearPending, type RedisKeys } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { createBatcher } from '../batcher';
import type { Processor } from '../register-worker';

// PostgreSQL refusing the data itself (SQLSTATE classes 22 data exception, 23 integrity, 54 program
// limit): retrying cannot help, so the job fails at once instead of blocking reads for its retries.
const isDataError = (err: unknown) => /^(22|23|54)/.test(String((err as { code?: unknown }).code ?? ''));

/** Writes span events from many jobs in one transaction; each job completes once its events are committed. */
export function spanWriteProcessor(deps: { sql: Sql; redis: Redis; keys: RedisKeys; batchSize: number; log: Logger }): Processor<'span-write'> {
  const batcher = createBatcher<SpanEvent>(
    async (events) => {
      await applySpanEvents(deps.sql, events);
      // After the commit: a read that waits on these sets now finds the data.
      await clearPending(deps.redis, deps.keys, events);
    },
    { maxItems: deps.batchSize, lingerMs: 2 },
  );
  return async (payload, job) => {
    try {
      await batcher.add(payload.events);
    } catch (err) {
      if (!isDataError(err)) throw err;
      deps.log.error({ jobId: job.id, err: (err as Error).message, traces: payload.events.map((e) => e.trace_id) }, 'span events refused by PostgreSQL; dropped');
      await clearPending(deps.redis, deps.keys, payload.events);
      throw new UnrecoverableError(`refused by PostgreSQL: ${(err as Error).message}`);
    }
  };
}
