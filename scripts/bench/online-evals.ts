// Online evaluation, two figures:
// - a backfill of a metric without a judge over BACKFILL_TRACES stored traces (seeded straight into
//   PostgreSQL), in traces per second, beside its floor: PostgreSQL's own bulk update writing the same
//   results into the same rows, 1000 at a time, in the same round, and the ratio of the two round by round;
// - what a live rule (sample rate 1) costs single-span ingest: the `ingest` load at its maximum rate with
//   the rule disabled and enabled, alternating, as a ratio of the persisted rates of each pair.
import { getOrCreateProject } from '@sightline/db';
import { atMaxRate, jsonBodies, ROUNDS, warmUp } from './lib/ingest';
import { load } from './lib/load';
import { median, round, writeResult, type Row } from './lib/report';
import { seedTraces } from './lib/seed';
import { tracePool } from './lib/spans';
import { createBenchStack, freePort } from './lib/stack';

const BACKFILL_TRACES = Number(process.env.BENCH_BACKFILL_TRACES ?? 100_000);
const LIVE_SECONDS = Number(process.env.BENCH_SECONDS ?? 30);

const stack = await createBenchStack({ port: await freePort() });
const { uuid: projectId } = await getOrCreateProject(stack.sql, stack.organizationId, 'stored');
console.log(`seeding ${BACKFILL_TRACES} traces`);
await seedTraces(stack.sql, { organizationId: stack.organizationId, projectId, traces: BACKFILL_TRACES });
await stack.sql`analyze spans`;
await stack.start();

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.base}${path}`, {
    method,
    headers: stack.headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's answers, read field by field below
  const json = (await res.json()) as Record<string, any>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
await api('POST', '/eval-metrics', { name: 'mentions-account', type: 'contains', config: { value: 'account' } });

/** The rule over every stored trace; answers traces per second, from the request to the backfill's end. */
async function backfill(n: number): Promise<{ traces: number; seconds: number; per_sec: number }> {
  const rule = await api('POST', '/eval-rules', {
    name: `backfill-${n}`,
    project_name: 'stored',
    metric_names: ['mentions-account'],
    enabled: false,
  });
  const t0 = performance.now();
  const started = await api('POST', `/eval-rules/${rule.id}/backfill`, {
    from: '2000-01-01T00:00:00Z',
    to: new Date(Date.now() + 86_400_000).toISOString(),
  });
  for (;;) {
    const [b] = (await api('GET', `/eval-rules/${rule.id}`)).backfills;
    if (b.status === 'done') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t0) / 1000;
  return { traces: started.total, seconds: round(seconds, 2), per_sec: round(started.total / seconds) };
}

/**
 * The floor: the same results written by PostgreSQL's own update of the roots, 1000 rows a statement: the
 * result by metric name, and the score appended to the span's scores (which keeps the score index the
 * `score:` filters read, as the product's write does).
 */
async function floor(n: number): Promise<{ per_sec: number }> {
  const roots = await stack.sql<{ trace_id: string }[]>`
    select trace_id from spans where organization_id = ${stack.organizationId} and project_id = ${projectId}
      and created and depth = 0 order by start_ts desc`;
  const name = `floor-${n}`;
  const t0 = performance.now();
  for (let i = 0; i < roots.length; i += 1000) {
    const ids = roots.slice(i, i + 1000).map((r) => r.trace_id);
    await stack.sql`
      update spans set eval_scores = coalesce(eval_scores, '{}') || jsonb_build_object(${name}::text, jsonb_build_object('score', 1)),
        scores = coalesce(scores, '[]') || jsonb_build_array(jsonb_build_object('name', ${name}::text, 'score', 1))
      where organization_id = ${stack.organizationId} and trace_id = any(${stack.sql.array(ids)}::uuid[])`;
  }
  return { per_sec: round(roots.length / ((performance.now() - t0) / 1000)) };
}

const backfills = [];
for (let r = 1; r <= ROUNDS; r++) {
  const b = await backfill(r);
  const f = await floor(r);
  const run = { backfill: b, floor: f, ratio_to_floor: round(b.per_sec / f.per_sec, 3) };
  console.log(`round ${r}`, run);
  backfills.push(run);
}
const spread = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;
const rate = median(backfills.map((b) => b.backfill.per_sec));
const floorRate = median(backfills.map((b) => b.floor.per_sec));
const backfillRows: Row[] = [
  {
    figure: `backfill, metric without a judge, over ${BACKFILL_TRACES} stored traces (traces/s, median of ${ROUNDS}; spread)`,
    value: `${rate} (${spread(backfills.map((b) => b.backfill.per_sec))})`,
    target: '≥ 2000',
    met: rate >= 2000,
  },
  {
    figure: 'floor: PostgreSQL updating the same rows with the same results and scores, 1000 a statement (rows/s)',
    value: `${floorRate} (${spread(backfills.map((b) => b.floor.per_sec))})`,
  },
  {
    // Each round's backfill over the floor measured right after it: the machine's load changes between runs.
    figure: 'backfill over the floor of its round (ratio, median; spread)',
    value: `${median(backfills.map((b) => b.ratio_to_floor))} (${spread(backfills.map((b) => b.ratio_to_floor))})`,
  },
];
// Without the live part, the backfill's figures are printed, and the recorded results left as they were.
if (process.env.BENCH_NO_LIVE) {
  for (const row of backfillRows) console.log(`${row.figure}: ${row.value}`);
  process.exit(0);
}

// Live: the same load with the rule disabled (a) and enabled (b), each pair in turn; the ratio of each pair.
const send = (seconds: number) =>
  load({
    url: `${stack.base}/trace_log`,
    headers: stack.headers,
    connections: 64,
    durationSec: seconds,
    body: jsonBodies(1, tracePool('bench')),
  });
await warmUp(stack, send);
const live = await api('POST', '/eval-rules', {
  name: 'live',
  project_name: 'bench',
  metric_names: ['mentions-account'],
  settle_seconds: 1,
  enabled: false,
});

/** Waits until every settled trace's evaluation is done: the next run must not share the machine with them. */
async function evaluationsDrained(): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const { runs } = await api('GET', `/eval-rules/${live.id}`);
    const settling = await stack.redis.zcard(`${stack.prefix}:trace-settle:delayed`);
    const waiting = await stack.redis.llen(`${stack.prefix}:trace-settle:wait`);
    if (runs.queued === 0 && settling === 0 && waiting === 0) return round((performance.now() - t0) / 1000, 1);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const pairs = [];
for (let r = 1; r <= ROUNDS; r++) {
  await api('PATCH', `/eval-rules/${live.id}`, { enabled: false });
  await new Promise((r) => setTimeout(r, 2500)); // the span writers' rule cache
  const without = await atMaxRate(stack, 1, send, LIVE_SECONDS);
  await api('PATCH', `/eval-rules/${live.id}`, { enabled: true });
  await new Promise((r) => setTimeout(r, 2500));
  const runsBefore = (await api('GET', `/eval-rules/${live.id}`)).runs.done;
  const withRule = await atMaxRate(stack, 1, send, LIVE_SECONDS);
  const drain = await evaluationsDrained();
  const evaluated = (await api('GET', `/eval-rules/${live.id}`)).runs.done - runsBefore;
  const pair = {
    without_rule: without.persisted_spans_per_sec,
    with_rule: withRule.persisted_spans_per_sec,
    ratio: round(withRule.persisted_spans_per_sec / without.persisted_spans_per_sec, 3),
    traces_evaluated: evaluated,
    roots_written: withRule.stored_spans / 5,
    evaluations_drained_after_s: drain,
  };
  console.log(`live pair ${r}`, pair);
  pairs.push(pair);
}

const ratio = median(pairs.map((p) => p.ratio));
writeResult({
  benchmark: 'online-evals',
  summary: [
    ...backfillRows,
    {
      figure: 'ingest at its maximum rate with a live rule (sample rate 1) over without (ratio, median; spread)',
      value: `${ratio} (${spread(pairs.map((p) => p.ratio))})`,
      target: '≥ 0.85',
      met: ratio >= 0.85,
    },
  ],
  backfills,
  live_pairs: pairs,
});
process.exit(0);
