import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { isRedisAway, waitForReplicas } from '@sightline/runtime';
import { PrivateRedis, sleep } from '../support/private-services';

// A master demoted while the intake waits for its replicas' copies (WAIT): in a cluster's failover, the
// killed master restarted still believing it serves its slots takes a write, then learns it is a replica.
// Redis then ends the blocked WAIT with an error of its own. The intake must read it as Redis away for a
// moment (a 503 and a retry), never as a fault of the request (a 500).
describe('a master demoted while a write waits for its replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-demotion-'));
  const servers: PrivateRedis[] = [];
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    for (const server of servers) await server.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends the wait with an error read as Redis away', async () => {
    const [master, other] = await Promise.all([
      PrivateRedis.create(join(dir, 'a')),
      PrivateRedis.create(join(dir, 'b')),
    ]);
    servers.push(master, other);
    const writer = new Redis(master.url);
    const admin = new Redis(master.url);
    clients.push(writer, admin);

    await writer.set('k', 'v');
    // No replica: the wait holds until its timeout, long past the demotion.
    const waited = waitForReplicas(writer, 'k', 1, 30_000).then(
      () => null,
      (err: Error) => err,
    );
    // Once Redis holds the WAIT blocked.
    while (!/blocked_clients:1/.test(await admin.info('clients'))) await sleep(20);
    await admin.replicaof('127.0.0.1', String(other.port));

    const err = await waited;
    expect(err?.message).toMatch(/^UNBLOCKED/);
    expect(isRedisAway(err)).toBe(true);
  });
});
