import { afterAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { createChaosStack, sleep, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds, unexpectedErrors } from './lib/figures';
import { apiClient } from './lib/http';
import { completionLoad, latency, spanLoad, tally, type CompletionRecord } from './lib/load';

// Fault: the master of Sightline's slot on a Redis Cluster (3 masters, 3 replicas) is killed while spans
// are written, and its replica takes over. Redis replicates asynchronously: what the master acknowledged
// and had not yet sent on is gone with it. The worst case is forced here, rather than left to chance: the
// replica is stopped (SIGSTOP) and cut off for a second before the kill, and the worker is stopped with
// it, so that the jobs of that second are only on the master. Acknowledged with the master alone (the default), they are lost;
// with REDIS_WAIT_REPLICAS=1 the intake waits for the replica's copy, so none of that second is
// acknowledged, and nothing acknowledged is lost. It runs again with a span-write shard a master
// (SPAN_WRITE_SHARDS=3), the second shard's master killed: each shard waits for its own replica, not
// the first shard's.
//
// Completions run through the same fault, their queue on the killed master (with one shard). What they
// promise is not durability but an honest answer: every caller hears within its budget, nothing says "not
// called" of a call its provider received, and no provider is called twice for one request.

const stacks: ChaosStack[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.close();
});

/** The completions' outcomes set against what their provider received, by each request's marker. */
async function completionFigures(stack: ChaosStack, records: CompletionRecord[], openai: FakeOpenAI) {
  const calls = new Map<string, number>();
  for (const r of openai.requests) {
    const content = (r.body as { messages?: { content?: string }[] } | null)?.messages?.at(-1)?.content ?? '';
    calls.set(content, (calls.get(content) ?? 0) + 1);
  }
  const callsOf = (r: CompletionRecord) => calls.get(r.marker) ?? 0;
  const answered = records.filter((r) => r.status === 'success');
  const logs = await stack.sql<{ trace_id: string; n: number }[]>`
    select trace_id::text, count(*)::int as n from spans where organization_id = ${stack.organizationId}
      and trace_id = any(${records.map((r) => r.traceId)}::uuid[]) group by trace_id`;
  const logged = new Map(logs.map((l) => [l.trace_id, l.n]));
  return {
    requests: records.length,
    outcomes: tally(records.map((r) => ({ outcome: r.status ? `${r.outcome} ${r.status}` : r.outcome }))),
    errors: tally(records.filter((r) => r.error).map((r) => ({ outcome: r.error!.replace(/[0-9a-f-]{36}/g, '…') }))),
    slowest_answer_s: seconds(Math.max(0, ...records.map((r) => r.doneAt - r.sentAt))),
    provider_calls: openai.requests.length,
    requests_called_twice: records.filter((r) => callsOf(r) > 1).length,
    said_not_called_but_called: records.filter((r) => /^not called/.test(r.error ?? '') && callsOf(r) > 0).length,
    answered_success: answered.length,
    answered_success_and_logged: answered.filter((r) => logged.has(r.traceId)).length,
    logged_twice: logs.filter((l) => l.n > 1).length,
  };
}

async function failover(waitReplicas: number, spanWriteShards = 1) {
  const openai = await new FakeOpenAI().start();
  // Calls in flight at every moment of the fault.
  openai.responseDelayMs = 300;
  const stack = await createChaosStack(`cluster-wait-${waitReplicas}-shards-${spanWriteShards}`, {
    redisCluster: true,
    spanWriteShards,
    env: {
      REDIS_WAIT_REPLICAS: String(waitReplicas),
      REDIS_WAIT_TIMEOUT_MS: '300',
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: 'sk-chaos',
      // A completion's budget of 5 s: its caller hears within 35 s whatever happens (the API's last resort).
      COMPLETION_TIMEOUT_MS: '5000',
      PROVIDER_MAX_RETRIES: '0',
    },
  });
  stack.own({ close: () => openai.stop() });
  stacks.push(stack);
  const cluster = stack.redisCluster!;
  const api = await stack.startApi();
  const worker = await stack.startWorker();
  const client = () => apiClient(api.base, stack.key);
  const load = spanLoad(client, { lanes: 4, batchSize: 20, pauseMs: 10, project: 'failover' });
  const completions = completionLoad(client, { lanes: 2, pauseMs: 50, project: 'failover-completions' });
  await sleep(2000);

  // The slot of the span writes' shard killed: the first's, or the second's when there are several.
  const slotKey = stack.shards.all[spanWriteShards > 1 ? 1 : 0]!.prefix;
  const { master, replicas } = await cluster.shardOf(slotKey);
  const replica = replicas[0]!;
  replica.process.child.kill('SIGSTOP');
  await cluster.cutReplication(master);
  worker.child.kill('SIGSTOP');
  const isolatedAt = Date.now();
  // A second at least, and until a write sent since has been answered. With each write waiting out its
  // replica's copy (300 ms), the lanes' writes can queue behind each other's WAIT past the second, and a
  // window without a write would prove nothing about the writes it holds.
  await sleep(1000);
  while (!load.records.some((r) => r.sentAt >= isolatedAt) && Date.now() < isolatedAt + 15_000) await sleep(50);
  const killedAt = Date.now();
  await master.process.signal('SIGKILL');
  replica.process.child.kill('SIGCONT');
  worker.child.kill('SIGCONT');
  // The cluster gives up on the master after its node timeout (2 s) and promotes the replica.
  const deadline = Date.now() + 60_000;
  // Between the two, no master serves the slot, and shardOf says so.
  const servedBy = () =>
    cluster.shardOf(slotKey).then(
      (shard) => shard.master.port,
      () => null,
    );
  while ((await servedBy()) !== replica.port) {
    if (Date.now() > deadline)
      throw new Error(
        `the replica was never promoted; its log, without its attempts to reach the killed master:\n${replica.process
          .output()
          .split('\n')
          .filter((line) => !/Connection refused|Connecting to MASTER|sync started/.test(line))
          .slice(-40)
          .join('\n')}`,
      );
    await sleep(100);
  }
  const promotedAt = Date.now();
  // Back, as a restart policy would bring it: it rejoins as the new master's replica, so that a shard
  // waiting for one replica's copy can acknowledge again.
  await cluster.restart(master);

  // Until writes are acknowledged again, for a while.
  let acknowledgedAgainAt: number | undefined;
  while (!acknowledgedAgainAt && Date.now() < deadline) {
    acknowledgedAgainAt = load.records.find((r) => r.sentAt > promotedAt && r.outcome === '200')?.doneAt;
    await sleep(50);
  }
  await sleep(2000);
  await Promise.all([load.stop(), completions.stop()]);
  const drainMs = await stack.waitForDrain();
  const stored = await stack.storedCount(load.acked);
  const [{ rows }] = await stack.sql<{ rows: number }[]>`
    select count(*)::int as rows from spans where organization_id = ${stack.organizationId}
      and trace_id = any(${load.acked as string[]}::uuid[])`;

  const before = load.records.filter((r) => r.doneAt < isolatedAt && r.outcome === '200');
  const isolated = load.records.filter((r) => r.sentAt >= isolatedAt && r.sentAt < killedAt);
  return {
    figures: {
      redis_wait_replicas: waitReplicas,
      span_write_shards: spanWriteShards,
      writes_before_fault: { requests: before.length, ...latency(before) },
      writes_while_replica_stopped: tally(isolated),
      replica_promoted_after_kill_s: seconds(promotedAt - killedAt),
      writes_acknowledged_again_after_kill_s: acknowledgedAgainAt && seconds(acknowledgedAgainAt - killedAt),
      all_writes: tally(load.records),
      api_unexpected_errors: unexpectedErrors(api.output()),
      spans_acknowledged: load.acked.length,
      spans_acknowledged_and_stored: stored,
      spans_acknowledged_and_lost: load.acked.length - stored,
      span_rows_of_acknowledged: rows,
      drain_after_load_s: seconds(drainMs),
      completions: await completionFigures(stack, completions.records, openai),
    },
    acknowledgedAgainAt,
    isolated,
  };
}

describe('a Redis Cluster master killed under span writes', () => {
  it('loses what the master alone acknowledged, and nothing once the intake waits for a replica', async () => {
    const alone = await failover(0);
    recordFigures('redis-cluster-failover', alone.figures);
    const waited = await failover(1);
    recordFigures('redis-cluster-failover-wait-replica', waited.figures);

    for (const { figures, acknowledgedAgainAt } of [alone, waited]) {
      expect(acknowledgedAgainAt).toBeDefined();
      expectHonestWrites(figures);
      // Nothing written twice: a span row per acknowledged span that was stored.
      expect(figures.span_rows_of_acknowledged).toBe(figures.spans_acknowledged_and_stored);
      expectHonestCompletions(figures.completions);
    }
    // The gap: writes acknowledged while the replica could not copy them, gone with the master.
    expect(alone.figures.writes_while_replica_stopped['200']).toBeGreaterThan(0);
    expect(alone.figures.spans_acknowledged_and_lost).toBeGreaterThan(0);
    // Closed: the same second answered 503 (no replica's copy within 300 ms), and nothing is lost.
    expect(Object.keys(waited.figures.writes_while_replica_stopped)).toEqual(['503']);
    expect(waited.isolated.length).toBeGreaterThan(0);
    expect(waited.figures.spans_acknowledged_and_lost).toBe(0);
  });

  it('loses nothing acknowledged with a span-write shard a master, when each shard waits for its replica', async () => {
    const sharded = await failover(1, 3);
    recordFigures('redis-cluster-failover-wait-replica-3-shards', sharded.figures);
    expect(sharded.acknowledgedAgainAt).toBeDefined();
    expectHonestWrites(sharded.figures);
    expect(sharded.figures.span_rows_of_acknowledged).toBe(sharded.figures.spans_acknowledged_and_stored);
    expect(sharded.figures.spans_acknowledged).toBeGreaterThan(0);
    expect(sharded.figures.spans_acknowledged_and_lost).toBe(0);
    expectHonestCompletions(sharded.figures.completions);
  });
});

/**
 * While the cluster fails over, a write is acknowledged (200) or refused honestly (503), never a 500 (its
 * cause named here if one came). A refusal is not required: the client's retries can outlast a quick
 * promotion, and then every write waits for the new master and is acknowledged.
 */
function expectHonestWrites(figures: { all_writes: Record<string, number>; api_unexpected_errors: object }) {
  expect(figures.api_unexpected_errors).toEqual({});
  expect(Object.keys(figures.all_writes).filter((status) => status !== '503')).toEqual(['200']);
}

/** Every caller heard (a 200 or an honest 503, never a 500 or silence), and nothing was called twice or denied. */
function expectHonestCompletions(c: Awaited<ReturnType<typeof completionFigures>>) {
  expect(c.requests).toBeGreaterThan(0);
  expect(Object.keys(c.outcomes).filter((o) => !/^(200 (success|error)|503)$/.test(o))).toEqual([]);
  expect(c.requests_called_twice).toBe(0);
  expect(c.said_not_called_but_called).toBe(0);
  expect(c.logged_twice).toBe(0);
  expect(c.answered_success).toBeGreaterThan(0);
}
