import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
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
    pool: Pool;
  }
}

/** The API's connections. They close in reverse order when the instance closes. */
export default fp<{ config: ApiEnv }>(async (app, { config }) => {
  // Fail fast when Redis is down (no offline queue), so nothing is acknowledged that Redis has not taken.
  const redisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;
  const redis = new Redis(config.REDIS_URL, redisOptions);
  const queueRedis = new Redis(config.REDIS_URL, redisOptions);
  for (const conn of [redis, queueRedis]) conn.on('error', (err) => app.log.debug({ err }, 'redis connection error'));
  const sql = createSql(config.DATABASE_URL);
  const pool = createPool({ threads: config.POOL_THREADS });

  app.decorate('config', config);
  app.decorate('sql', sql);
  app.decorate('redis', redis);
  app.decorate('keys', redisKeys(config.QUEUE_PREFIX));
  app.decorate('spanWrites', createProducer('span-write', queueRedis, config.QUEUE_PREFIX));
  app.decorate('pool', pool);

  app.addHook('onClose', async () => {
    await app.spanWrites.close();
    await pool.close();
    queueRedis.disconnect();
    redis.disconnect();
    await sql.end({ timeout: 5 });
  });
});
