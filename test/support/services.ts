import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, inject } from 'vitest';
import { addApiKey, createSql, ensureOrganization, type Sql } from '@sightline/db';

export const databaseUrl = () => inject('databaseUrl');
export const redisUrl = () => inject('redisUrl');

/** A queue prefix of its own for each test file, under the run's. */
export function uniquePrefix(label = 't'): string {
  return `sightline-test:${inject('runId')}:${label}:${randomBytes(3).toString('hex')}`;
}

export function testSql(): Sql {
  return createSql(databaseUrl(), { max: 5 });
}

export function testRedis(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: null });
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
