import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { spanShards, type RedisKeys, type SpanShards } from '@sightline/queues';
import { connectRedis, redisAddress, spanShardPrefixes, watchRedis, type RedisReachability } from '@sightline/runtime';

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis;
    /** The prefix of every key in Redis, Sightline's and BullMQ's (a hash tag on a cluster). */
    keyPrefix: string;
    /** Every Redis key Sightline owns, under the prefix. */
    keys: RedisKeys;
    /** The span-write shards (SPAN_WRITE_SHARDS), the first under `keyPrefix`. */
    spanShards: SpanShards;
    /** Reports a Redis connection's losses with the node's others: one line when Redis goes, one when it is back. */
    watchRedis: RedisReachability['watch'];
  }
}

/**
 * Fail fast when Redis is down (no offline queue), so nothing is acknowledged that Redis has not taken.
 * The queues plugin opens a connection of its own with the same options.
 */
export const API_REDIS_OPTIONS = { enableOfflineQueue: false, maxRetriesPerRequest: 1 } as const;

/** Long enough for a loaded machine; a Redis that has not answered by then is reported as away. */
const OPEN_WITHIN_MS = 5_000;

/** The API's Redis connection for its own commands (pending marks, backlog, rate limits) and its key names. */
export default fp(
  async (app) => {
    const reachability = watchRedis(redisAddress(app.config), app.log);
    const redis = reachability.watch(connectRedis(app.config, API_REDIS_OPTIONS));
    app.decorate('watchRedis', reachability.watch);
    app.decorate('redis', redis);
    const shards = spanShards(spanShardPrefixes(app.config));
    app.decorate('spanShards', shards);
    app.decorate('keyPrefix', shards.all[0].prefix);
    app.decorate('keys', shards.all[0].keys);
    // Every plugin has opened its connections by now (this one's, the queues', the reply subscriber's).
    app.addHook('onReady', () => reachability.opened(OPEN_WITHIN_MS));
    app.addHook('onClose', async () => redis.disconnect());
  },
  { name: 'redis', dependencies: ['config'] },
);
