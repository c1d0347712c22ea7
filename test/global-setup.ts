import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrate } from '@sightline/db';

// Each test run gets its own database and queue prefix, so runs never collide with each other or with
// a running service on the same PostgreSQL and Redis.
export default async function setup(project: TestProject) {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(base);
  url.pathname = `/sightline_test_${runId}`;
  const databaseUrl = url.toString();
  await migrate(databaseUrl);
  project.provide('databaseUrl', databaseUrl);
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  project.provide('redisUrl', redisUrl);
  project.provide('runId', runId);

  return async () => {
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "sightline_test_${runId}" with (force)`);
    await admin.end();
    const redis = new Redis(redisUrl);
    for await (const keys of redis.scanStream({ match: `sightline-test:${runId}:*`, count: 1000 })) {
      if (keys.length) await redis.unlink(...keys);
    }
    await redis.quit();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    runId: string;
  }
}
