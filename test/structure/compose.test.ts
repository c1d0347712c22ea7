import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApiEnv, WorkerEnv } from '@sightline/schemas';
import { ROOT } from '../support/processes';

// No check here runs Docker. This keeps docker-compose.yml's profile `cluster` in step with Sightline: the
// variables its first lines tell people to set are settings of the API and the workers, and name services
// and ports the file has; the cluster's init joins every Redis node of the profile.

const text = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
type Service = { profiles?: string[]; command?: string[]; environment?: Record<string, string>; image?: string };
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };
const inProfile = Object.entries(compose.services).filter(([, s]) => s.profiles?.includes('cluster'));
const redisNodes = inProfile.filter(([, s]) => s.command?.includes('--cluster-enabled')).map(([name]) => name);

/** The `NAME=value` settings of the command the file's first lines give for the profile. */
function advisedSettings(): Record<string, string> {
  const header = text.slice(0, text.indexOf('\nx-redis-node'));
  const command = header.slice(header.indexOf('REDIS_CLUSTER_NODES=')).replace(/\\\n#/g, ' ');
  return Object.fromEntries([...command.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

describe("docker-compose.yml's profile cluster", () => {
  it('has six Redis nodes in cluster mode, and a PostgreSQL replica', () => {
    expect(redisNodes).toHaveLength(6);
    expect(inProfile.map(([name]) => name)).toContain('postgres-replica');
  });

  it('advises settings the API and the workers take, naming its own services', () => {
    const settings = advisedSettings();
    expect(Object.keys(settings).sort()).toEqual(['DATABASE_REPLICA_URLS', 'REDIS_CLUSTER_NODES', 'SPAN_WRITE_SHARDS']);
    const api = ApiEnv.parse(settings);
    const worker = WorkerEnv.parse(settings);
    expect(worker.REDIS_CLUSTER_NODES).toEqual(api.REDIS_CLUSTER_NODES);
    for (const node of api.REDIS_CLUSTER_NODES) {
      expect(redisNodes).toContain(node.host);
      expect(node.port).toBe(6379);
    }
    // A shard a master: the cluster's 6 nodes are 3 masters with a replica each.
    expect(api.SPAN_WRITE_SHARDS).toBe(redisNodes.length / 2);
    expect(api.DATABASE_REPLICA_URLS.map((url) => new URL(url).hostname)).toEqual(['postgres-replica']);
    // The API and workers pass them on.
    for (const role of ['api', 'worker'])
      for (const name of Object.keys(settings)) expect(compose.services[role]!.environment).toHaveProperty(name);
  });

  it('joins every Redis node of the profile into the cluster', () => {
    const init = compose.services['redis-cluster']!.command!.join(' ');
    expect(init).toContain('--cluster create --cluster-replicas 1');
    const numbers = /for n in ([\d ]+);/.exec(init)![1]!.trim().split(' ');
    expect(numbers.map((n) => `redis-node-${n}`).sort()).toEqual([...redisNodes].sort());
  });
});
