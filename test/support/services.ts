import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, inject } from 'vitest';
import { addApiKey, createSql, ensureOrganization, type Sql } from '@sightline/db';
import { connectRedis } from '@sightline/runtime';
import { BaseEnv } from '@sightline/schemas';

export const databaseUrl = () => inject('databaseUrl');
export const redisUrl = () => inject('redisUrl');
/**
 * What a Sightline process is told of Redis: REDIS_URL; in the 'clustered' project, REDIS_CLUSTER_NODES and
 * a span-write shard for each of the cluster's 3 masters.
 */
export function redisEnv(): Record<string, string> {
  const nodes = inject('redisClusterNodes');
  return { REDIS_URL: redisUrl(), ...(nodes && { REDIS_CLUSTER_NODES: nodes, SPAN_WRITE_SHARDS: '3' }) };
}
/** DATABASE_REPLICA_URLS and its bound when the suite runs against a replica (the 'replicated' project). */
export const replicaEnv = () => inject('replicaEnv');

/** A queue prefix of its own for each test file, under the run's. */
export function uniquePrefix(label = 't'): string {
  return `sightline-test:${inject('runId')}:${label}:${randomBytes(3).toString('hex')}`;
}

export function testSql(): Sql {
  return createSql(databaseUrl(), { max: 5 });
}

/** A connection to the run's Redis, or to its cluster, as a worker opens it. */
export function testRedis(): Redis {
  return connectRedis(BaseEnv.pick({ REDIS_URL: true, REDIS_CLUSTER_NODES: true }).parse(redisEnv()), {
    maxRetriesPerRequest: null,
  });
}

/** PostgreSQL and Redis clients for a whole test file, closed after its last test. */
export function useServices(): { sql: Sql; redis: Redis } {
  const sql = testSql();
  const redis = testRedis();
  afterAll(async () => {
    await redis.quit();
    await sql.end();
  });
  return { sql, redis };
}

/** A fresh organization with one API key (a new one, unless given). */
export async function newOrganization(sql: Sql, label = 'org', key?: string): Promise<{ id: string; key: string }> {
  const id = await ensureOrganization(sql, `${label}-${randomBytes(4).toString('hex')}`);
  return { id, key: await addApiKey(sql, id, key) };
}
