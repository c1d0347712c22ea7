import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { isRedisAway, waitForReplicas } from '@sightline/runtime';
import { PrivateRedis, sleep } from '../support/private-services';

// In a cluster's failover, the killed master restarted still believes it serves its slots and takes a write,
// then learns it is a replica; and clients whose map of the slots is older still send it writes. Redis answers
// each with an error of its own. The intake must read them as Redis away for a moment (a 503 and a retry),
// never as a fault of the request (a 500).
describe('a master demoted in a failover', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightline-demotion-'));
  const servers: PrivateRedis[] = [];
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    for (const server of servers) await server.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  /** Two private servers, stopped after the tests, and a client of the first. */
  async function twoServers(names: [string, string]): Promise<[PrivateRedis, PrivateRedis, Redis]> {
    const [first, second] = await Promise.all(names.map((name) => PrivateRedis.create(join(dir, name))));
    servers.push(first!, second!);
    const client = new Redis(first!.url);
    clients.push(client);
    return [first!, second!, client];
  }

  it('ends the wait with an error read as Redis away', async () => {
    const [master, other, writer] = await twoServers(['a', 'b']);
    const admin = new Redis(master.url);
    clients.push(admin);

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

  // The restarted master, a replica already, sent the span-write script by a client whose map of the slots is
  // older (seen in CI: a span write answered 500 in a failover).
  it('refuses a script’s write on the replica it became, with an error read as Redis away, and makes none of it', async () => {
    const [, master, client] = await twoServers(['c', 'd']);
    await client.replicaof('127.0.0.1', String(master.port));

    const script = "redis.call('GET', KEYS[1]); redis.call('SET', KEYS[1], 'written'); return 1";
    const err = await client.eval(script, 1, 'k').then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^READONLY/);
    expect(isRedisAway(err)).toBe(true);
    expect(await client.get('k')).toBeNull();
  });
});
