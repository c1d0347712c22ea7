import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReplier, createReplyWaiter, redisKeys, ReplyError } from '@sightline/queues';
import { connectRedis, connectSubscriber } from '@sightline/runtime';
import { PrivateRedisCluster, sleep } from '../support/private-services';

// A caller waiting for a job's reply on a Redis Cluster of its own (3 masters, 3 replicas, on ports of
// their own), when the master its subscription lives on is killed: a reply published while nobody listens
// is lost, so the caller is told at once (503) rather than at its timeout, and the waits after the
// failover hear their replies from the slot's new master.

let dir: string;
let cluster: PrivateRedisCluster;
let redis: Redis;
let subscriber: Redis;
const keys = redisKeys('{replies-test}');
const quiet = { debug: () => {}, warn: () => {} };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sightline-cluster-replies-'));
  cluster = await PrivateRedisCluster.create(dir);
  const target = {
    REDIS_URL: 'redis://127.0.0.1:1',
    REDIS_CLUSTER_NODES: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
  };
  // As a worker's: its commands wait out the failover.
  redis = connectRedis(target, { maxRetriesPerRequest: null });
  await redis.set(keys.seq, '0');
}, 120_000);

afterAll(async () => {
  subscriber?.disconnect();
  redis?.disconnect();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a wait for a job's reply on a Redis Cluster", () => {
  it('is told at once when the master its subscription lives on is lost, and hears replies again from the new one', async () => {
    // As an API node's: no offline queue, so that a wait while nobody listens fails rather than waits.
    subscriber = connectSubscriber(redis, keys.seq, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    subscriber.on('error', () => {});
    const waiter = createReplyWaiter(subscriber, keys, quiet);
    const ask = (timeoutMs: number, answer: boolean) => {
      const replyTo = waiter.newReplyTo();
      return waiter.awaitReply<string>(
        replyTo,
        async () => answer && (await createReplier(redis, keys, replyTo)({ done: replyTo })),
        { timeoutMs, timeoutMessage: 'timed out' },
      );
    };
    await expect(poll(() => ask(2_000, true), 30_000)).resolves.toMatch(/./);

    const { master, replicas } = await cluster.shardOf(keys.seq);
    const waiting = ask(120_000, false).then(
      () => 'answered',
      (err: Error) => err,
    );
    await sleep(200);
    const killedAt = Date.now();
    await master.process.signal('SIGKILL');
    const outcome = await Promise.race([waiting, sleep(10_000).then(() => 'still waiting 10 s after the kill')]);
    expect(outcome).toBeInstanceOf(ReplyError);
    expect((outcome as ReplyError).status).toBe(503);
    expect(Date.now() - killedAt).toBeLessThan(10_000);

    // The replica takes the slot over (the cluster's node timeout, 2 s, and an election); a wait then hears
    // its reply, published on the new master.
    const answer = await poll(() => ask(2_000, true), 60_000);
    expect(answer).toMatch(/./);
    expect((await cluster.shardOf(keys.seq)).master.port).toBe(replicas[0]!.port);
  }, 120_000);
});

/** `attempt`'s value once it succeeds, trying again every 200 ms for `withinMs`. */
async function poll<T>(attempt: () => Promise<T>, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}
