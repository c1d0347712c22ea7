import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetLostSpanEvents, releaseForgottenMarks, takeSequenceNumbers } from '@sightline/queues';
import { buildStack, call, type TestStack } from '../support/app';
import { commandsRun, PrivateRedisCluster } from '../support/private-services';
import { newOrganization, testSql } from '../support/services';

// Span writes over SPAN_WRITE_SHARDS=3 shards on a Redis Cluster of its own (3 masters, 3 replicas, on
// ports of their own): each shard on a master of its own, the span writes' scripts divided among the
// masters rather than all on one, and a trace whose spans are in several shards read whole at once.

const SHARDS = 3;
let dir: string;
let cluster: PrivateRedisCluster;
let stack: TestStack;
let key: string;
const sql = testSql();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sightline-span-shards-'));
  cluster = await PrivateRedisCluster.create(dir);
  stack = await buildStack({
    env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: cluster.nodeList, SPAN_WRITE_SHARDS: String(SHARDS) },
  });
  ({ key } = await newOrganization(sql, 'span-shards'));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await sql.end();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: Record<string, unknown>) => call(stack.app, key, 'POST', '/trace_log', body);
const get = (id: string) => call(stack.app, key, 'GET', `/trace_log/${id}`);

/** The master serving each shard's tag now. */
const mastersOfShards = () =>
  Promise.all(stack.app.spanShards.all.map(async (shard) => (await cluster.shardOf(shard.prefix)).master.port));

/** Scripts each master has run (EVALSHA and EVAL): the accept script, BullMQ's job scripts. */
const scriptsRunBy = (ports: number[]) => commandsRun(ports, /evalsha|eval/);

/** A span id whose shard is `shard`. */
function idInShard(shard: number): string {
  for (;;) {
    const id = randomUUID();
    if (stack.app.spanShards.indexOf(id) === shard) return id;
  }
}

describe('span writes over three shards on a Redis Cluster', () => {
  it('puts each shard on a master of its own', async () => {
    const masters = await mastersOfShards();
    expect(new Set(masters).size).toBe(SHARDS);
  });

  it("divides the span writes' scripts among the masters", async () => {
    const masters = await mastersOfShards();
    const before = await scriptsRunBy(masters);
    const ids = Array.from({ length: 300 }, () => randomUUID());
    for (const trace_id of ids) expect((await post({ trace_id, project_name: 'shards' })).statusCode).toBe(200);
    await expect.poll(() => stored(ids), { timeout: 20_000 }).toBe(ids.length);
    const after = await scriptsRunBy(masters);
    const ran = after.map((n, i) => n - before[i]!);
    const total = ran.reduce((a, b) => a + b, 0);
    // About a third each (the home shard's master also runs the other queues' few): none carries them all.
    for (const n of ran) expect(n / total).toBeGreaterThan(0.15);
    for (const n of ran) expect(n / total).toBeLessThan(0.6);
  });

  it('reads a trace whose spans are in two shards only once both are written', async () => {
    const root = idInShard(0);
    const child = idInShard(1);
    // The child's shard holds its job: its worker does not take it until the queue is resumed.
    const childQueue = new Queue('span-write', {
      connection: stack.app.redis,
      prefix: stack.app.spanShards.all[1]!.prefix,
    });
    await childQueue.pause();
    try {
      expect((await post({ trace_id: root, project_name: 'shards' })).statusCode).toBe(200);
      expect(
        (await post({ trace_id: child, root_trace_id: root, parent_trace_id: root, project_name: 'shards' }))
          .statusCode,
      ).toBe(200);
      // Not the root alone: the child's write was accepted, so the read waits for it, then says so.
      const early = await get(root);
      expect(early.statusCode).toBe(503);
      expect((await get(child)).statusCode).toBe(503);
    } finally {
      await childQueue.resume();
      await childQueue.close();
    }
    const tree = await get(root);
    expect(tree.statusCode).toBe(200);
    expect(tree.json().children_ids).toEqual([child]);
  });

  it("releases the marks of each shard's lost events, on the master that holds them", async () => {
    const redis = stack.app.redis;
    const organizationId = randomUUID();
    const marked = [];
    for (const [i, shard] of stack.app.spanShards.all.entries()) {
      const traceId = idInShard(i);
      // Numbered and marked, its job never queued (or queued and lost): nothing will write it.
      await takeSequenceNumbers(redis, shard.keys, [{ organization_id: organizationId, trace_id: traceId }]);
      expect(await forgetLostSpanEvents(redis, shard.keys, stack.app.spanWrites[i]!.queue, 0)).toBe(1);
      marked.push({ keys: shard.keys, traceId });
    }
    for (const { keys } of marked) await releaseForgottenMarks(redis, keys);
    for (const { keys, traceId } of marked) {
      expect(await redis.zcard(keys.pendingOrganization(organizationId))).toBe(0);
      expect(await redis.scard(keys.pendingSpan(organizationId, traceId))).toBe(0);
    }
  });
});

async function stored(ids: string[]): Promise<number> {
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from spans where trace_id = any(${ids}::uuid[])`;
  return n;
}
