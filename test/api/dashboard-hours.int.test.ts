import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { foldTraceHours } from '@sightline/db';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// A dashboard of whole-hour buckets with no filter is read from the hours' sums (trace_hours, and the roots'
// changes not folded yet) plus the roots of its first and last part hours. These tests count the traces
// they sent themselves, bucket by bucket, and hold both ways of reading to that count.

const {
  stack,
  sql,
  orgs: [org],
} = useStack({ orgs: ['dashboard-hours'] });
const { key } = org;

/** The one clock of these traces. */
const NOW = Date.now();
const HOUR = 3_600_000;
const TRACES = 48;
const MODELS = ['gpt-4o-mini', 'claude-3-5-haiku'];

type Sent = {
  root: string;
  start: number;
  latency: number | null;
  status: string;
  quality: number | null;
  feedback: number | null;
  calls: { model: string; cost: number; input: number; output: number }[];
  experiment: boolean;
};

/** A window that starts and ends inside an hour, five days long: buckets of 3 hours. */
const WINDOW = {
  from: new Date(Math.floor(NOW / HOUR) * HOUR - 5 * 24 * HOUR + 17 * 60_000).toISOString(),
  to: new Date(Math.floor(NOW / HOUR) * HOUR + HOUR + 23 * 60_000).toISOString(),
};
const BUCKET = 3 * HOUR;

// Spread over four days, one hour apart or more, one in each part hour at the window's ends (read from the roots,
// not the hours); latencies from 0 to about 20 s, some unknown; a fifth failed;
// a score on two thirds, feedback on a quarter, one or two model calls.
const sent: Sent[] = Array.from({ length: TRACES }, (_, i) => ({
  root: randomUUID(),
  start:
    i === 0
      ? Date.parse(WINDOW.from) + 5 * 60_000
      : i === 1
        ? Date.parse(WINDOW.to) - 10 * 60_000
        : NOW - (17 + i * 113) * 60_000,
  latency: i % 11 === 3 ? null : i % 13 === 5 ? 0 : 0.05 * 1.37 ** (i % 20),
  status: i % 5 === 2 ? 'error' : 'success',
  quality: i % 3 === 0 ? null : (i % 4) / 3,
  feedback: i % 4 === 1 ? i % 2 : null,
  calls: [
    { model: MODELS[i % 2], cost: 0.001 * (i + 1), input: 10 + i, output: 2 * i },
    ...(i % 6 === 0 ? [{ model: MODELS[(i + 1) % 2], cost: 0.0005 * i, input: 3, output: 1 }] : []),
  ],
  experiment: i % 7 === 4,
}));

let project: string;
let experiment: string;
/** The traces as the last test left them. */
let current = sent;

const spansOf = (t: Sent, calls = t.calls) => [
  {
    trace_id: t.root,
    project_uuid: project,
    trace_name: 'turn',
    start_timestamp: new Date(t.start).toISOString(),
    latency: t.latency,
    status: t.status,
    scores: t.quality === null ? [] : [{ name: 'quality', score: t.quality }],
    feedback_score: t.feedback,
    ...(t.experiment && { experiment_uuid: experiment }),
  },
  ...calls.map((c) => ({
    trace_id: randomUUID(),
    root_trace_id: t.root,
    parent_trace_id: t.root,
    project_uuid: project,
    trace_name: 'llm',
    cost: c.cost,
    input_tokens: c.input,
    output_tokens: c.output,
    configuration: { model: c.model },
  })),
];

async function send(spans: object[]) {
  const res = await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans });
  expect(res.statusCode, res.body).toBe(200);
}

const board = async (body: object = {}) => {
  const res = await call(stack.app, key, 'POST', '/dashboard', { project_uuid: project, ...WINDOW, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

/** percentile_cont, as PostgreSQL computes it. */
function percentile(sorted: number[], q: number): number | null {
  if (!sorted.length) return null;
  const at = q * (sorted.length - 1);
  const low = sorted[Math.floor(at)];
  return low + (at - Math.floor(at)) * (sorted[Math.ceil(at)] - low);
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** The figures of `traces`, bucket by bucket, counted here. */
function expected(traces: Sent[], { experiments = false } = {}) {
  const origin = Math.floor(Date.parse(WINDOW.from) / HOUR) * HOUR;
  const counted = traces.filter((t) => experiments || !t.experiment);
  const figures = (ts: Sent[]) => {
    const latencies = ts
      .map((t) => t.latency)
      .filter((l) => l !== null)
      .sort((a, b) => a - b);
    const calls = ts.flatMap((t) => t.calls);
    return {
      traces: ts.length,
      errors: ts.filter((t) => t.status === 'error').length,
      latency_p50: percentile(latencies, 0.5),
      latency_p95: percentile(latencies, 0.95),
      latency_p99: percentile(latencies, 0.99),
      input_tokens: calls.reduce((n, c) => n + c.input, 0),
      output_tokens: calls.reduce((n, c) => n + c.output, 0),
      cost: calls.reduce((n, c) => n + c.cost, 0),
    };
  };
  const buckets = new Map<string, Sent[]>();
  for (const t of counted) {
    const start = utc(origin + Math.floor((t.start - origin) / BUCKET) * BUCKET);
    buckets.set(start, [...(buckets.get(start) ?? []), t]);
  }
  return {
    totals: figures(counted),
    buckets: [...buckets.keys()].sort().map((start) => ({ start, ...figures(buckets.get(start)!) })),
    quality: [...buckets.keys()].sort().flatMap((start) => {
      const scored = buckets.get(start)!.filter((t) => t.quality !== null);
      const mean = scored.reduce((s, t) => s + t.quality!, 0) / scored.length;
      return scored.length ? [{ name: 'quality', start, mean, count: scored.length }] : [];
    }),
    feedback: [...buckets.keys()].sort().flatMap((start) => {
      const given = buckets.get(start)!.filter((t) => t.feedback !== null);
      const mean = given.reduce((s, t) => s + t.feedback!, 0) / given.length;
      return given.length ? [{ start, mean, count: given.length }] : [];
    }),
    models: MODELS.map((model) => {
      const calls = counted.flatMap((t) => t.calls).filter((c) => c.model === model);
      return { model, calls: calls.length, cost: calls.reduce((n, c) => n + c.cost, 0) };
    }),
  };
}

type Figures = Record<string, number | string | null>;

/** Holds a dashboard's figures to those counted here: counts exactly, latency within `tolerance` of each. */
function expectFigures(actual: Figures, wanted: Figures, tolerance: number) {
  for (const [name, value] of Object.entries(wanted)) {
    if (name.startsWith('latency_') && typeof value === 'number' && value > 0) {
      expect(Math.abs((actual[name] as number) / value - 1), `${name} ${actual[name]} for ${value}`).toBeLessThan(
        tolerance,
      );
    } else if (typeof value === 'number' && !Number.isInteger(value)) {
      expect(actual[name], name).toBeCloseTo(value, 9);
    } else expect(actual[name], name).toEqual(value);
  }
}

/** The whole dashboard against what was sent: from the hours, or (`exact`) from the roots. */
function expectDashboard(d: Record<string, unknown>, traces: Sent[], { exact = false, experiments = false } = {}) {
  const want = expected(traces, { experiments });
  const tolerance = exact ? 1e-9 : 0.01;
  expect(d.latency_approximate).toBe(!exact);
  expectFigures(d.totals as Figures, want.totals, tolerance);
  const buckets = d.buckets as Figures[];
  expect(buckets.map((b) => b.start)).toEqual(want.buckets.map((b) => b.start));
  want.buckets.forEach((b, i) => expectFigures(buckets[i], b, tolerance));
  expect(d.scores).toEqual(want.quality.map((q) => ({ ...q, mean: expect.closeTo(q.mean, 9) })));
  expect(d.feedback).toEqual(want.feedback.map((f) => ({ ...f, mean: expect.closeTo(f.mean, 9) })));
  const models = d.cost_by_model as { model: string; calls: number; cost: number }[];
  expect(models).toHaveLength(MODELS.length);
  for (const m of want.models)
    expect(models.find((x) => x.model === m.model)).toEqual({ ...m, cost: expect.closeTo(m.cost, 9) });
}

/** Every trace of the window, by a filter they all pass: read from the roots themselves. */
const ALL_TURNS = { filters: [{ field: 'trace_name', operator: 'equals', value: 'turn' }] };

beforeAll(async () => {
  project = (await call(stack.app, key, 'POST', '/project', { name: 'hours' })).json().uuid;
  experiment = (
    await call(stack.app, key, 'POST', '/experiment', { name: 'qa', project_uuid: project, run_name: 'one' })
  ).json().uuid;
  await send(sent.flatMap((t) => spansOf(t)));
  for (const t of sent) expect((await readTrace(stack.app, key, t.root)).statusCode).toBe(200);
});

describe('the dashboard of a long window', () => {
  it('has the roots’ changes folded into the hours by the worker within seconds', async () => {
    const pending = async () =>
      (await sql`select count(*)::int as n from trace_hour_changes where organization_id = ${org.id}`)[0].n;
    await expect.poll(pending, { timeout: 20_000, interval: 500 }).toBe(0);
    const [{ traces }] = await sql`
      select sum(n)::int as traces from trace_hours where organization_id = ${org.id} and figure = 'traces'`;
    expect(traces).toBe(TRACES);
  });

  it('counts what the roots count, bucket by bucket, with latency within 1%', async () => {
    expectDashboard(await board(), sent);
    expectDashboard(await board(ALL_TURNS), sent, { exact: true });
    expectDashboard(await board({ include_experiments: true }), sent, { experiments: true });
  });

  it('counts the same before and after the changes are folded into the hours', async () => {
    const before = await board();
    // In chunks of 7 changes, each in its own transaction, until none is left.
    await foldTraceHours(sql, { chunk: 7 });
    const [{ left }] = await sql`
      select count(*)::int as left from trace_hour_changes where organization_id = ${org.id}`;
    expect(left).toBe(0);
    // The same figures; sums of floats to 12 digits, as they are added in another order.
    const digits = (d: object) =>
      JSON.parse(JSON.stringify(d, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));
    expect(digits(await board())).toEqual(digits(before));
  });

  it('follows late spans and changed roots, folded or not', async () => {
    await foldTraceHours(sql);
    // A late call under five traces; five roots sent again with another latency, status and feedback; one
    // moved to another day.
    const changed = sent.map((t, i) => {
      if (i % 9 === 1) return { ...t, calls: [...t.calls, { model: MODELS[0], cost: 0.25, input: 100, output: 50 }] };
      if (i % 9 === 2)
        return { ...t, latency: 42 + i, status: 'error', feedback: 1, start: i === 2 ? NOW - 50 * HOUR : t.start };
      return t;
    });
    await send(
      changed.flatMap((t, i) => {
        if (i % 9 === 1) return spansOf(t, t.calls.slice(-1)).slice(1);
        return i % 9 === 2 ? spansOf(t, []) : [];
      }),
    );
    for (const t of changed) expect((await readTrace(stack.app, key, t.root)).statusCode).toBe(200);
    // The trace log answers before the root's totals are stored in some orders: wait for them.
    await expect
      .poll(async () => (await board(ALL_TURNS)).totals.cost, { timeout: 10_000 })
      .toBeCloseTo(expected(changed).totals.cost, 9);
    expectDashboard(await board(), changed);
    expectDashboard(await board(ALL_TURNS), changed, { exact: true });
    await foldTraceHours(sql, { chunk: 7 });
    expectDashboard(await board(), changed);
    current = changed;
  });

  it('forgets the traces that retention removes, folded or not', async () => {
    const removed = current.filter((_, i) => i % 10 === 3);
    await sql`delete from spans where organization_id = ${org.id} and root_trace_id = any(${removed.map((t) => t.root)}::uuid[])`;
    const left = current.filter((t) => !removed.includes(t));
    expectDashboard(await board(), left);
    await foldTraceHours(sql);
    expectDashboard(await board(), left);
    expectDashboard(await board(ALL_TURNS), left, { exact: true });
  });
});
