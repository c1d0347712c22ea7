import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrate } from '@sightline/db';
import { forgetRunKeys, machineRedisUrl, newRunId, provide } from './global-setup';
import { PrivatePostgres } from './support/private-services';

// The 'replicated' project runs suites written for one PostgreSQL against a primary with a streaming
// replica of its own, which applies every commit 2 s late: the console may read it (its bound is a
// minute), and every read that promises read-your-writes must still see its write at once.
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-replicated-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user and must reach its directories inside this one
  const primary = await PrivatePostgres.create(join(dir, 'primary'));
  await migrate(primary.url);
  const replica = await primary.replica(join(dir, 'replica'), { applyDelay: '2s' });
  const redisUrl = machineRedisUrl();
  const runId = newRunId();
  provide(project, {
    runId,
    databaseUrl: primary.url,
    redisUrl,
    replicaEnv: { DATABASE_REPLICA_URLS: replica.url, DATABASE_REPLICA_MAX_LAG_MS: '60000' },
  });

  return async () => {
    for (const pg of [replica, primary]) pg.process?.forceStop();
    await Promise.all([replica.process?.exited, primary.process?.exited]);
    rmSync(dir, { recursive: true, force: true });
    await forgetRunKeys(redisUrl, runId);
  };
}
