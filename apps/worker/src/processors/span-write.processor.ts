import type { Redis } from 'ioredis';
import { applySpanEvents, type Sql } from '@sightline/db';
import { clearPending, type RedisKeys } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { createBatcher } from '../batcher';
import type { Processor } from '../register-worker';

/** Writes span events from many jobs in one transaction; each job completes once its events are committed. */
export function spanWriteProcessor(deps: { sql: Sql; redis: Redis; keys: RedisKeys; batchSize: number }): Processor<'span-write'> {
  const batcher = createBatcher<SpanEvent>(
    async (events) => {
      await applySpanEvents(deps.sql, events);
      // After the commit: a read that waits on these sets now finds the data.
      await clearPending(deps.redis, deps.keys, events);
    },
    { maxItems: deps.batchSize, lingerMs: 2 },
  );
  return (payload) => batcher.add(payload.events);
}
