import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { renderTrees, type SpanTexts } from '@sightline/core';
import { createSql, type Sql } from '@sightline/db';
import { createProducer, redisKeys, type Producer, type RedisKeys } from '@sightline/queues';
import { createPool, type Pool } from '@sightline/pool';
import type { ApiEnv } from '@sightline/schemas';

declare module 'fastify' {
  interface FastifyInstance {
    config: ApiEnv;
    sql: Sql;
    redis: Redis;
    keys: RedisKeys;
    spanWrites: Producer<'span-write'>;
    completionJobs: Producer<'completion'>;
    finalizeJobs: Producer<'experiment-finalize'>;
    pool: Pool;
    /** The trees' JSON from spans PostgreSQL serialized (in their dialect); many spans are rendered on the thread pool. */
    renderTrees(spans: SpanTexts, rootIds: string[]): Promise<Buffer>;
  }
}

// Below this many spans a tree is rendered faster on the event loop than shipped to a thread.
const POOL_TREE_THRESHOLD = 2000;

/** The API's connections. They close in reverse order when the instance closes. */
export default fp<{ config: ApiEnv }>(async (app, { config }) => {
  // Fail fast when Redis is down (no offline queue), so nothing is acknowledged that Redis has not taken.
  const redisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;
  const redis = new Redis(config.REDIS_URL, redisOptions);
  const queueRedis = new Redis(config.REDIS_URL, redisOptions);
  for (const conn of [redis, queueRedis]) conn.on('error', (err) => app.log.debug({ err }, 'redis connection error'));
  // No JIT for the API's queries: compiling costs 0.1-1 s, more than any listing query should take, and the
  // planner turns it on by estimated cost (a filter evaluated on every root of a large project).
  const sql = createSql(config.DATABASE_URL, { connection: { jit: 'off' } });
  const pool = createPool({ threads: config.POOL_THREADS });

  app.decorate('config', config);
  app.decorate('sql', sql);
  app.decorate('redis', redis);
  app.decorate('keys', redisKeys(config.QUEUE_PREFIX));
  app.decorate('spanWrites', createProducer('span-write', queueRedis, config.QUEUE_PREFIX));
  app.decorate('completionJobs', createProducer('completion', queueRedis, config.QUEUE_PREFIX));
  app.decorate('finalizeJobs', createProducer('experiment-finalize', queueRedis, config.QUEUE_PREFIX));
  app.decorate('pool', pool);
  app.decorate('renderTrees', async (spans: SpanTexts, rootIds: string[]) =>
    spans.trace_id.length > POOL_TREE_THRESHOLD ? pool.renderTrees(spans, rootIds) : renderTrees(spans, rootIds),
  );

  app.addHook('onClose', async () => {
    await Promise.all([app.spanWrites.close(), app.completionJobs.close(), app.finalizeJobs.close()]);
    await pool.close();
    queueRedis.disconnect();
    redis.disconnect();
    await sql.end({ timeout: 5 });
  });
}, { name: 'infra' });
