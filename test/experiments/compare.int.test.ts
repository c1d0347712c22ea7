import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [org, { key: otherKey }],
} = useStack({ orgs: ['compare', 'compare-other'] });

const key = org.key;
const post = (path: string, body?: unknown, k = key) => call(stack.app, k, 'POST', path, body);
const CASES = 13;
const LONG_OUTPUT = 'x'.repeat(10_050);
let project: { uuid: string };
// Baseline A holds cases 0..12; B lacks case 12, and scores higher than A on acc in 10 of its 12 cases, lower in
// one, the same in one, and is slower everywhere; C is A again, with case 0 twice (the same values).
let a: string, b: string, c: string;

const newExperiment = async (run_name: string) =>
  (await post('/experiment', { name: 'qa', project_uuid: project.uuid, run_name })).json().uuid as string;

const startOf = (i: number, seconds = 0) => new Date(Date.UTC(2026, 0, 2, 3, i, seconds)).toISOString();

async function writeSample(
  experiment_uuid: string,
  i: number,
  s: { acc: number; latency: number; output?: string; seconds?: number; childCost?: number },
) {
  const root = randomUUID();
  const res = await post('/trace_log', {
    trace_id: root,
    project_uuid: project.uuid,
    experiment_uuid,
    inputs: { question: `q${i}`, n: i },
    target: `answer ${i}`,
    output: s.output ?? `output ${i}`,
    status: 'success',
    start_timestamp: startOf(i, s.seconds),
    latency: s.latency,
    ...(s.childCost === undefined && { cost: 0.01 }),
    scores: [{ name: 'acc', score: s.acc }],
  });
  expect(res.statusCode, res.body).toBe(200);
  if (s.childCost === undefined) return;
  // The LLM call's cost sits on a child: the trace's cost is the sum over its spans.
  await post('/trace_log', {
    trace_id: randomUUID(),
    root_trace_id: root,
    parent_trace_id: root,
    project_uuid: project.uuid,
    trace_name: 'llm',
    cost: s.childCost,
  });
}

/** B's acc against A's 0.5: +0.4 in cases 0..9, −0.2 in case 10, the same in case 11. */
const accOfB = (i: number) => (i < 10 ? 0.9 : i === 10 ? 0.3 : 0.5);

beforeAll(async () => {
  project = (await post('/project', { name: `compare-${randomUUID()}` })).json();
  [a, b, c] = [await newExperiment('a'), await newExperiment('b'), await newExperiment('c')];
  const cases = Array.from({ length: CASES }, (_, i) => i);
  await Promise.all([
    ...cases.map((i) => writeSample(a, i, { acc: 0.5, latency: 1, output: i === 3 ? LONG_OUTPUT : undefined })),
    ...cases.slice(0, 12).map((i) => writeSample(b, i, { acc: accOfB(i), latency: 2, childCost: 0.02 })),
    ...cases.map((i) => writeSample(c, i, { acc: 0.5, latency: 1 })),
    writeSample(c, 0, { acc: 0.5, latency: 1, output: 'repeat', seconds: 30 }),
  ]);
  // A finish counts every write accepted before it: the samples are then all stored.
  for (const uuid of [a, b, c]) expect((await post(`/experiment/${uuid}/finished`)).statusCode).toBe(200);
  // Scores that the API refuses but older data may hold: a text score and a null one are no numbers.
  await sql`
    update spans set scores = scores || '[{"name": "verdict", "score": "good", "reason": "fine"}, {"name": "judge", "score": null}]'
    where organization_id = ${org.id} and experiment_uuid = ${a} and depth = 0 and inputs->>'n' = '1'`;
});

describe('POST /experiments/compare', () => {
  it('aligns the runs by case and tests each against the baseline, on the thread pool', async () => {
    const pooled = stack.app.pool.completedTasks();
    const res = await post('/experiments/compare', { experiment_uuids: [b, a, c], baseline_uuid: a });
    expect(res.statusCode, res.body).toBe(200);
    expect(stack.app.pool.completedTasks()).toBe(pooled + 1);
    const body = res.json();
    expect(body).toMatchObject({
      baseline_uuid: a,
      test: 'wilcoxon_signed_rank',
      alpha: 0.05,
      experiments: [
        { uuid: b, name: 'qa', run_name: 'b', status: 'completed', samples: 12 },
        { uuid: a, name: 'qa', run_name: 'a', status: 'completed', samples: 13 },
        { uuid: c, name: 'qa', run_name: 'c', status: 'completed', samples: 14 },
      ],
      cases: {
        total: 13,
        in_all: 12,
        repeated: 1,
        missing: [
          { uuid: b, count: 1 },
          { uuid: a, count: 0 },
          { uuid: c, count: 0 },
        ],
      },
    });
    expect(body.metrics.map((m: any) => [m.name, m.kind, m.better])).toEqual([
      ['acc', 'score', 'higher'],
      ['latency', 'latency', 'lower'],
      ['cost', 'cost', 'lower'],
    ]);
    const [acc, latency, cost] = body.metrics;
    expect(acc.runs).toEqual([
      { uuid: b, mean: expect.closeTo((10 * 0.9 + 0.3 + 0.5) / 12, 12), n: 12 },
      { uuid: a, mean: 0.5, n: 13 },
      { uuid: c, mean: 0.5, n: 13 },
    ]);
    // 11 non-zero differences, 10 of them +0.4: an exact permutation test gives p = 4 / 2^11.
    const [accB, accC] = acc.comparisons;
    expect(accB).toMatchObject({ uuid: b, pairs: 12, improved: 10, regressed: 1, unchanged: 1, significant: true });
    expect(accB.p_value).toBeCloseTo(4 / 2048, 12);
    expect(accB.mean_difference).toBeCloseTo((10 * 0.4 - 0.2) / 12, 12);
    expect(accB.ci_low).toBeGreaterThan(0);
    expect(accB.ci_high).toBeLessThanOrEqual(0.4);
    // Identical runs: every pair unchanged, no p-value, not significant.
    expect(accC).toEqual({
      uuid: c,
      pairs: 13,
      mean_difference: 0,
      ci_low: 0,
      ci_high: 0,
      p_value: null,
      significant: false,
      improved: 0,
      regressed: 0,
      unchanged: 13,
    });
    // Slower everywhere: lower is better, so every pair regressed.
    expect(latency.comparisons[0]).toMatchObject({ pairs: 12, improved: 0, regressed: 12, significant: true });
    expect(latency.comparisons[0].mean_difference).toBe(1);
    expect(cost.runs[0]).toEqual({ uuid: b, mean: expect.closeTo(0.02, 12), n: 12 });
    expect(cost.comparisons[0]).toMatchObject({ pairs: 12, regressed: 12 });
  });

  it('answers a viewer key too: it only reads', async () => {
    const viewer = (await post('/api-keys', { role: 'viewer', label: 'viewer@example.com' })).json().key;
    const res = await post('/experiments/compare', { experiment_uuids: [a, c], baseline_uuid: c }, viewer);
    expect(res.statusCode, res.body).toBe(200);
  });

  it("answers 404 for another organization's experiment or an unknown one", async () => {
    const other = (await post('/project', { name: `theirs-${randomUUID()}` }, otherKey)).json();
    const theirs = (await post('/experiment', { name: 'x', project_uuid: other.uuid }, otherKey)).json().uuid;
    for (const uuid of [theirs, randomUUID()]) {
      const res = await post('/experiments/compare', { experiment_uuids: [a, uuid], baseline_uuid: a });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: 'experiment not found' });
    }
  });

  it('answers 422 for a baseline not among the experiments, for 1 or 6 experiments, and for a repeated one', async () => {
    const bad = [
      [{ experiment_uuids: [a, b], baseline_uuid: c }, ['body', 'baseline_uuid']],
      [{ experiment_uuids: [a], baseline_uuid: a }, ['body', 'experiment_uuids']],
      [
        { experiment_uuids: [a, b, c, ...Array.from({ length: 3 }, randomUUID)], baseline_uuid: a },
        ['body', 'experiment_uuids'],
      ],
      [{ experiment_uuids: [a, a.toUpperCase()], baseline_uuid: a }, ['body', 'experiment_uuids']],
    ] as const;
    for (const [body, loc] of bad) {
      for (const path of ['/experiments/compare', '/experiments/compare/rows']) {
        const res = await post(path, body);
        expect(res.statusCode, `${path} ${JSON.stringify(body)}`).toBe(422);
        expect(res.json().detail.map((d: any) => d.loc)).toContainEqual(loc);
      }
    }
  });
});

describe('POST /experiments/compare/rows', () => {
  const rows = async (page: number, page_size: number) => {
    const res = await post('/experiments/compare/rows', {
      experiment_uuids: [a, b, c],
      baseline_uuid: a,
      page,
      page_size,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('pages the cases in the order they started, each run side by side', async () => {
    const pages = [await rows(1, 5), await rows(2, 5), await rows(3, 5)];
    for (const [n, page] of pages.entries()) expect(page).toMatchObject({ total: CASES, page: n + 1, page_size: 5 });
    expect(pages.map((p) => p.rows.length)).toEqual([5, 5, 3]);
    const all = pages.flatMap((p) => p.rows);
    expect(all.map((r: any) => r.inputs)).toEqual(
      Array.from({ length: CASES }, (_, i) => ({ question: `q${i}`, n: i })),
    );
    expect(new Set(all.map((r: any) => r.key)).size).toBe(CASES);
    expect(all[1]).toMatchObject({
      target: 'answer 1',
      runs: [
        {
          output: 'output 1',
          output_truncated: false,
          latency: 1,
          cost: 0.01,
          status: 'success',
        },
        { scores: { acc: 0.9 }, latency: 2, cost: expect.closeTo(0.02, 12) },
        { scores: { acc: 0.5 } },
      ],
    });
    expect(all[1].runs[0].scores).toEqual({ acc: 0.5, verdict: null, judge: null });
    expect(all[12].runs[1]).toBeNull(); // B lacks case 12
    expect(all[0].runs[2].output).toBe('output 0'); // C's earliest sample of case 0, not its repeat
    expect(all[3].runs[0]).toMatchObject({ output: LONG_OUTPUT.slice(0, 10_000), output_truncated: true });
    expect((await rows(4, 5)).rows).toEqual([]);
  });

  it('keeps the cases a run improved on, regressed on or left the same, as /experiments/compare counts them', async () => {
    const filtered = async (outcome: object) => {
      const res = await post('/experiments/compare/rows', {
        experiment_uuids: [a, b, c],
        baseline_uuid: a,
        page_size: 50,
        outcome,
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      return { total: body.total, cases: body.rows.map((r: any) => r.inputs.n) };
    };
    const acc = (run_uuid: string, change: string) => filtered({ run_uuid, kind: 'score', metric: 'acc', change });
    expect(await acc(b, 'improved')).toEqual({ total: 10, cases: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
    expect(await acc(b, 'regressed')).toEqual({ total: 1, cases: [10] });
    expect(await acc(b, 'unchanged')).toEqual({ total: 1, cases: [11] });
    // C's case 0 ran twice with the same values: its mean is compared, so every case stays the same.
    expect((await acc(c, 'unchanged')).total).toBe(CASES);
    // Latency and cost are better lower: B, slower and dearer in every case it shares, regressed on both.
    const lower = async (kind: string, change: string) => (await filtered({ run_uuid: b, kind, change })).total;
    expect([await lower('latency', 'regressed'), await lower('latency', 'improved')]).toEqual([12, 0]);
    expect([await lower('cost', 'regressed'), await lower('cost', 'improved')]).toEqual([12, 0]);
  });

  it('keeps the case of one sample, of any run', async () => {
    const { key, runs } = (await rows(1, 5)).rows[1];
    const caseOf = (trace_id: string, uuids = [a, b]) =>
      post('/experiments/compare/rows', { experiment_uuids: uuids, baseline_uuid: uuids[0], trace_id });
    for (const trace of [runs[0].trace_id, runs[1].trace_id]) {
      const res = await caseOf(trace);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ total: 1, rows: [{ key, inputs: { question: 'q1', n: 1 } }] });
    }
    // A sample of a run not compared (C) names no case here, nor does a trace of no run.
    expect((await caseOf(runs[2].trace_id)).json()).toMatchObject({ total: 0, rows: [] });
    expect((await caseOf(randomUUID())).json()).toMatchObject({ total: 0, rows: [] });
  });

  it('answers 422 for an outcome of the baseline or of no run compared, and for a score without its name', async () => {
    const refused = async (extra: object) =>
      post('/experiments/compare/rows', { experiment_uuids: [a, b], baseline_uuid: a, ...extra });
    for (const outcome of [
      { run_uuid: a, kind: 'latency', change: 'improved' },
      { run_uuid: c, kind: 'latency', change: 'improved' },
      { run_uuid: b, kind: 'score', change: 'improved' },
      { run_uuid: b, kind: 'latency', metric: 'acc', change: 'improved' },
      { run_uuid: b, kind: 'latency', change: 'better' },
    ]) {
      const res = await refused({ outcome });
      expect(res.statusCode, JSON.stringify(outcome)).toBe(422);
      expect(res.json().detail[0].loc).toContain('outcome');
    }
    expect((await refused({ trace_id: 'not a trace' })).statusCode).toBe(422);
  });

  it("names a sample's experiment run in its trace's skeleton, from any of its spans, and none for production", async () => {
    const sample = (await rows(1, 5)).rows[0].runs[1].trace_id;
    const skeletonOf = async (id: string) => (await call(stack.app, key, 'GET', `/trace/${id}/skeleton`)).json();
    expect(await skeletonOf(sample)).toMatchObject({ root_trace_id: sample, experiment_uuid: b });
    const child = (await skeletonOf(sample)).spans.find((s: any) => s.trace_id !== sample).trace_id;
    expect(await skeletonOf(child)).toMatchObject({ root_trace_id: sample, experiment_uuid: b });

    const production = randomUUID();
    await post('/trace_log', { trace_id: production, project_uuid: project.uuid, output: 'live' });
    await readTrace(stack.app, key, production);
    expect(await skeletonOf(production)).toMatchObject({ root_trace_id: production, experiment_uuid: null });
  });

  it('answers 404 for an unknown experiment', async () => {
    const res = await post('/experiments/compare/rows', { experiment_uuids: [a, randomUUID()], baseline_uuid: a });
    expect(res.statusCode).toBe(404);
  });
});
