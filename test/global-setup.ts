import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrate } from '@sightline/db';

// Each test run gets its own database and queue prefix, so runs never collide with each other or with
// a running service on the same PostgreSQL and Redis.
export default async function setup(project: TestProject) {
  const runId = newRunId();
  const database = await runDatabase(runId);
  const redisUrl = machineRedisUrl();
  provide(project, { runId, databaseUrl: database.url, redisUrl });
  return async () => {
    await database.drop();
    await forgetRunKeys(redisUrl, runId);
  };
}

/** What every project tells its tests; the topology parts (replicas, a cluster) are empty unless given. */
export function provide(
  project: TestProject,
  context: {
    runId: string;
    databaseUrl: string;
    redisUrl: string;
    replicaEnv?: Record<string, string>;
    redisClusterNodes?: string;
  },
) {
  project.provide('runId', context.runId);
  project.provide('databaseUrl', context.databaseUrl);
  project.provide('redisUrl', context.redisUrl);
  project.provide('replicaEnv', context.replicaEnv ?? {});
  project.provide('redisClusterNodes', context.redisClusterNodes ?? '');
}

export function newRunId(): string {
  return `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

export const machineRedisUrl = () => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A database of the run's own on the machine's PostgreSQL, migrated; `drop` removes it. */
export async function runDatabase(runId: string): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const url = new URL(base);
  url.pathname = `/sightline_test_${runId}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const admin = postgres(base, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "sightline_test_${runId}" with (force)`);
      await admin.end();
    },
  };
}

/** Removes the Redis keys of a run, which live under its queue prefixes (see uniquePrefix). */
export async function forgetRunKeys(redisUrl: string, runId: string): Promise<void> {
  const redis = new Redis(redisUrl);
  for await (const keys of redis.scanStream({ match: `sightline-test:${runId}:*`, count: 1000 })) {
    if (keys.length) await redis.unlink(...keys);
  }
  await redis.quit();
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    runId: string;
    /** What a Sightline process of this project is told of PostgreSQL replicas (none but in 'replicated'). */
    replicaEnv: Record<string, string>;
    /** REDIS_CLUSTER_NODES for the 'clustered' project; '' elsewhere, where redisUrl is the Redis. */
    redisClusterNodes: string;
  }
}
