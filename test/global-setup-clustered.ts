import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { newRunId, provide, runDatabase } from './global-setup';
import { PrivateRedisCluster } from './support/private-services';

// The 'clustered' project runs suites written for one Redis against a Redis Cluster of its own: 3 masters,
// each with a replica, on ports of their own; the machine's Redis is not used.
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-clustered-'));
  const cluster = await PrivateRedisCluster.create(dir);
  const runId = newRunId();
  const database = await runDatabase(runId);
  // REDIS_URL is a closed port: whatever would talk to one Redis instead of the cluster fails.
  const redisUrl = 'redis://127.0.0.1:1';
  provide(project, { runId, databaseUrl: database.url, redisUrl, redisClusterNodes: cluster.nodeList });
  return async () => {
    await database.drop();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
