import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChaosStack, sleep, type ChaosStack, type ManagedProcess } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiCaller } from './lib/http';

// Fault 6: an evaluation rule backfilled over 10,000 stored traces by two worker processes, both killed
// with SIGKILL mid-backfill and started again. The backfill job is redelivered and resumes at its cursor:
// afterwards every trace has been evaluated once (one run, one score), and the backfill counts them all.

const TRACES = 10_000;

let stack: ChaosStack;
beforeAll(async () => {
  stack = await createChaosStack('backfill-kill');
});
afterAll(async () => stack?.close());

describe('a backfill whose workers are killed mid-way', () => {
  it('ends with every trace evaluated exactly once', async () => {
    const api = await stack.startApi();
    let workers: ManagedProcess[] = [await stack.startWorker(), await stack.startWorker()];
    const call = apiCaller(api.base, stack.key);

    const ids = Array.from({ length: TRACES }, () => randomUUID());
    const t0 = Date.now() - 3600_000;
    for (let b = 0; b < TRACES; b += 1000) {
      await call('POST', '/trace_logs/batch', {
        trace_logs: ids.slice(b, b + 1000).map((trace_id, k) => ({
          trace_id,
          project_name: 'chaos',
          trace_name: 'answer',
          start_timestamp: new Date(t0 + b + k).toISOString(),
          end_timestamp: new Date(t0 + b + k + 100).toISOString(),
          output: (b + k) % 2 ? 'Lyon' : 'Paris',
        })),
      });
    }
    await stack.waitForDrain();
    await call('POST', '/eval-metrics', { name: 'has-paris', type: 'contains', config: { value: 'Paris' } });
    const rule = await call('POST', '/eval-rules', {
      name: 'backfilled',
      project_name: 'chaos',
      metric_names: ['has-paris'],
      enabled: false,
    });
    const started = Date.now();
    const backfill = await call('POST', `/eval-rules/${rule.id}/backfill`, {
      from: new Date(t0 - 1000).toISOString(),
      to: new Date().toISOString(),
    });
    expect(backfill.total).toBe(TRACES);

    const progress = async () => (await call('GET', `/eval-rules/${rule.id}`)).backfills[0];
    // Both workers killed once the walk is under way, and again later; each time both start again.
    const kills: { at_s: number; done: number }[] = [];
    for (const share of [0.15, 0.5]) {
      for (;;) {
        const b = await progress();
        if (b.done >= TRACES * share || b.status !== 'running') break;
        await sleep(20);
      }
      const b = await progress();
      if (b.status !== 'running') break;
      await Promise.all(workers.map((w) => w.signal('SIGKILL')));
      kills.push({ at_s: seconds(Date.now() - started), done: b.done });
      workers = [await stack.startWorker(), await stack.startWorker()];
    }
    for (;;) {
      const b = await progress();
      if (b.status === 'done') break;
      if (Date.now() - started > 240_000) throw new Error(`backfill stuck: ${JSON.stringify(b)}`);
      await sleep(250);
    }
    const done = await progress();

    const [runs] = await stack.sql`
      select count(*)::int as n, count(distinct trace_id)::int as distinct_spans,
        count(*) filter (where status = 'done' and generation = 0)::int as done_once
      from eval_rule_runs where rule_id = ${rule.id}`;
    const [scores] = await stack.sql`
      select count(*) filter (where jsonb_array_length(jsonb_path_query_array(scores, '$[*] ? (@.name == "has-paris")')) = 1)::int as one_score,
        count(*) filter (where (eval_scores->'has-paris'->>'score')::float = (case when output = 'Paris' then 1 else 0 end))::int as right_score
      from spans where organization_id = ${stack.organizationId} and trace_id = any(${stack.sql.array(ids)}::uuid[])`;
    recordFigures('backfill-kill', {
      traces: TRACES,
      kills,
      seconds_to_done: seconds(Date.now() - started),
      runs,
      scores,
    });
    expect(kills.length).toBeGreaterThan(0);
    expect(done).toMatchObject({ status: 'done', total: TRACES, done: TRACES });
    expect(runs).toEqual({ n: TRACES, distinct_spans: TRACES, done_once: TRACES });
    expect(scores).toEqual({ one_score: TRACES, right_score: TRACES });
  });
});
