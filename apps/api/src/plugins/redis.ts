import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { redisKeys, type RedisKeys } from '@sightline/queues';

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis;
    /** Every Redis key Sightline owns, under the queue prefix. */
    keys: RedisKeys;
  }
}

/**
 * Fail fast when Redis is down (no offline queue), so nothing is acknowledged that Redis has not taken.
 * The queues plugin opens a connection of its own with the same options.
 */
export const API_REDIS_OPTIONS = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;

/** The API's Redis connection for its own commands (pending marks, backlog, rate limits) and its key names. */
export default fp(
  async (app) => {
    const redis = new Redis(app.config.REDIS_URL, API_REDIS_OPTIONS);
    redis.on('error', (err) => app.log.debug({ err }, 'redis connection error'));
    app.decorate('redis', redis);
    app.decorate('keys', redisKeys(app.config.QUEUE_PREFIX));
    app.addHook('onClose', async () => redis.disconnect());
  },
  { name: 'redis', dependencies: ['config'] },
);
