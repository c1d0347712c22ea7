import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChaosStack, sleep, type ChaosStack, type ManagedProcess } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient, type Outcome } from './lib/http';
import { outcomeOf } from './lib/load';

// Fault 1: 100,000 spans are ingested, each written twice (a create, then a second event adding its
// output and end time) and one in ten updated once more (PUT /trace_log), while the worker is killed with
// SIGKILL several times mid-batch and restarted. Jobs held by a killed worker are redelivered and their
// events folded again: afterwards every span is there exactly once with every update applied. It runs on
// one Redis, and again on a Redis Cluster of 3 masters with a span-write shard each.

const SPANS = 100_000;
const BATCH = 1000;
const LANES = 4;
const KILLS = 4;

describe.each([
  { engine: 'one Redis', figures: 'worker-kill', options: {} },
  {
    engine: 'a Redis Cluster, a span-write shard a master',
    figures: 'worker-kill-cluster',
    options: { redisCluster: true, spanWriteShards: 3 },
  },
])('the worker killed mid-batch, on $engine', ({ figures: figuresName, options }) => {
  let stack: ChaosStack;
  beforeAll(async () => {
    stack = await createChaosStack(figuresName, options);
  });
  afterAll(async () => stack?.close());

  it('ends with exactly 100k spans, no duplicates and no missing updates', async () => {
    const api = await stack.startApi();
    const workers: ManagedProcess[] = [await stack.startWorker()];
    const client = () => apiClient(api.base, stack.key);

    const ids = Array.from({ length: SPANS }, () => randomUUID());
    const rootOf = (i: number) => ids[i - (i % 10)];
    const t0 = Date.now();
    // Traces of ten spans: a root and nine children. The second event of a span repeats its ids, as a
    // client library sends them with every event of the span.
    const place = (i: number) => ({
      trace_id: ids[i],
      project_name: 'chaos',
      root_trace_id: rootOf(i),
      ...(i % 10 !== 0 && { parent_trace_id: rootOf(i) }),
    });
    const create = (i: number) => ({
      ...place(i),
      trace_name: `span-${i}`,
      inputs: { i },
      start_timestamp: new Date(t0 + i).toISOString(),
    });
    const finish = (i: number) => ({
      ...place(i),
      output: `out-${i}`,
      end_timestamp: new Date(t0 + i + 500).toISOString(),
    });

    // A client retries what the API asks it to retry later (429, and 503 when its event loop lags).
    const retried: Record<string, number> = {};
    async function sendUntilAccepted(send: () => Promise<Outcome>): Promise<void> {
      for (;;) {
        const o = await send();
        const outcome = outcomeOf(o);
        if (outcome === '200') return;
        if (outcome !== '503' && outcome !== '429')
          throw new Error(`unexpected answer ${outcome}: ${o.kind === 'response' ? o.body.slice(0, 300) : ''}`);
        retried[outcome] = (retried[outcome] ?? 0) + 1;
        await sleep(200);
      }
    }
    const range = (from: number, n: number) => Array.from({ length: n }, (_, k) => from + k);
    let requests = 0;
    async function lane(lane: number) {
      for (let b = lane; b < SPANS / BATCH; b += LANES) {
        const span = range(b * BATCH, BATCH);
        await sendUntilAccepted(() => client().post('/trace_logs/batch', { trace_logs: span.map(create) }));
        await sendUntilAccepted(() => client().post('/trace_logs/batch', { trace_logs: span.map(finish) }));
        const updated = span.filter((i) => i % 10 === 3);
        for (let k = 0; k < updated.length; k += 10) {
          await Promise.all(
            updated.slice(k, k + 10).map((i) =>
              sendUntilAccepted(() =>
                client().put('/trace_log', {
                  trace_id: ids[i],
                  root_trace_id: rootOf(i),
                  field_name_to_value_map: { status: 'error', error: `err-${i}` },
                }),
              ),
            ),
          );
        }
        requests += 2 + updated.length;
      }
    }
    const ingesting = Promise.all(range(0, LANES).map(lane));
    let ingested = false;
    void ingesting.then(
      () => (ingested = true),
      () => (ingested = true),
    );

    // Kills while jobs are waiting, so the worker holds as many as it can (WORKER_CONCURRENCY) mid-batch;
    // each replacement starts a second later. The active count includes the jobs of earlier kills that
    // are not yet found stalled.
    const kills: { at_s: number; jobs_active: number; jobs_waiting: number }[] = [];
    while (kills.length < KILLS) {
      await sleep(4000 + Math.random() * 3000);
      const counts = await stack.jobCounts();
      if (counts.wait === 0) {
        if (ingested) break;
        continue;
      }
      await workers.at(-1)!.signal('SIGKILL');
      kills.push({ at_s: seconds(Date.now() - t0), jobs_active: counts.active, jobs_waiting: counts.wait });
      await sleep(1000);
      workers.push(await stack.startWorker());
    }
    await ingesting;
    const acceptedAt = Date.now();
    const drainMs = await stack.waitForDrain(300_000);

    const [row] = await stack.sql<
      {
        n: number;
        distinct_ids: number;
        created: number;
        finished: number;
        updated: number;
        untouched: number;
        roots: number;
        children: number;
      }[]
    >`
      select count(*)::int as n,
             count(distinct trace_id)::int as distinct_ids,
             count(*) filter (where trace_name = 'span-' || (inputs->>'i'))::int as created,
             count(*) filter (where output = 'out-' || (inputs->>'i') and end_ts is not null)::int as finished,
             count(*) filter (where (inputs->>'i')::int % 10 = 3 and status = 'error' and error = 'err-' || (inputs->>'i'))::int as updated,
             count(*) filter (where (inputs->>'i')::int % 10 <> 3 and status is null and error is null)::int as untouched,
             count(*) filter (where trace_id = root_trace_id and parent_trace_id = trace_id)::int as roots,
             count(*) filter (where trace_id <> root_trace_id and parent_trace_id = root_trace_id)::int as children
      from spans where organization_id = ${stack.organizationId}`;
    const counts = await stack.jobCounts();
    const stalled = workers.flatMap((w) =>
      [...w.output().matchAll(/"jobId":"([^"]+)","msg":"job stalled/g)].map((m) => m[1]),
    );
    const figures = {
      spans: SPANS,
      span_events_sent: SPANS * 2 + SPANS / 10,
      requests,
      retried_requests: retried,
      worker_kills: kills,
      stalled_jobs_redelivered: stalled.length,
      jobs_stalled_more_than_once: stalled.length - new Set(stalled).size,
      accept_s: seconds(acceptedAt - t0),
      drain_after_accept_s: seconds(drainMs),
      total_s: seconds(Date.now() - t0),
      stored: row,
      failed_jobs: counts.failed,
    };
    recordFigures(figuresName, figures);

    expect(kills.length).toBeGreaterThanOrEqual(3);
    expect(kills.every((k) => k.jobs_active > 0 && k.jobs_waiting > 0)).toBe(true);
    expect(row).toEqual({
      n: SPANS,
      distinct_ids: SPANS,
      created: SPANS,
      finished: SPANS,
      updated: SPANS / 10,
      untouched: SPANS - SPANS / 10,
      roots: SPANS / 10,
      children: SPANS - SPANS / 10,
    });
    expect(counts.failed).toBe(0);
  });
});
