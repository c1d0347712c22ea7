import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createProducer, redisKeys } from '@sightline/queues';
import { RULES_CACHE_MS, traceSettleProcessor } from '../../apps/worker/src/processors/trace-settle.processor';
import { sleep } from '../fakes/fake-server';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { testRedis } from '../support/services';

const {
  gw,
  sql,
  orgs: [org, other],
} = useGateway({ env: { PROVIDER_MAX_RETRIES: '0' }, orgs: ['rules', 'rules-other'] });
const { key } = org;

const post = (path: string, body: unknown, k = key) => call(gw.stack.app, k, 'POST', path, body);
const patch = (path: string, body: unknown, k = key) => call(gw.stack.app, k, 'PATCH', path, body);
const get = (path: string, k = key) => call(gw.stack.app, k, 'GET', path);

beforeAll(async () => {
  for (const metric of [
    { name: 'has-paris', type: 'contains', config: { value: 'Paris' } },
    { name: 'exact', type: 'exact_match' },
    {
      name: 'judge',
      type: 'llm_judge',
      config: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        prompt_template: '{"score": 0.75, "reason": "ok {{output}}"}',
      },
    },
    {
      name: 'paid-judge',
      type: 'llm_judge',
      config: { provider: 'openai', model: 'gpt-4o-mini', prompt_template: '{"score": 0.5} {{output}}', cache: false },
    },
    {
      name: 'mute-judge',
      type: 'llm_judge',
      // Not cached: each attempt asks the provider again.
      config: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        prompt_template: 'no number here for {{output}}',
        cache: false,
      },
    },
  ]) {
    expect((await post('/eval-metrics', metric)).statusCode).toBe(200);
  }
});

type Rule = { id: string; runs: { done: number; queued: number }; cost_today: number; paused_until: string | null };

async function newRule(body: Record<string, unknown>): Promise<Rule> {
  const res = await post('/eval-rules', { name: `rule-${randomUUID()}`, settle_seconds: 1, ...body });
  expect(res.statusCode, res.body).toBe(200);
  // The span writer reads an organization's rules again within this time: traces written later are watched.
  await sleep(RULES_CACHE_MS);
  return res.json();
}

/** A root span of `project`, ended (it has an end time) unless `ended: false`. */
async function writeTrace(project: string, fields: Record<string, unknown> = {}, ended = true): Promise<string> {
  const trace_id = (fields.trace_id as string | undefined) ?? randomUUID();
  const now = new Date().toISOString();
  const res = await post('/trace_log', {
    trace_id,
    project_name: project,
    trace_name: 'answer',
    start_timestamp: now,
    ...(ended && { end_timestamp: now }),
    ...fields,
  });
  expect(res.statusCode, res.body).toBe(200);
  return trace_id;
}

const scoresOf = async (id: string) =>
  ((await readTrace(gw.stack.app, key, id)).json().scores ?? []) as { name: string; score: number }[];

const eventually = <T>(work: () => Promise<T>, timeout = 15_000) => vi.waitFor(work, { timeout, interval: 100 });

const runsOf = (ruleId: string) =>
  sql<{ trace_id: string; generation: number; status: string }[]>`
    select trace_id, generation, status from eval_rule_runs where rule_id = ${ruleId} order by trace_id`;

describe('eval rules: the API', () => {
  it('are created, read, listed by project, changed and deleted, within their organization', async () => {
    const project = `p-${randomUUID()}`;
    const created = await newRule({
      name: 'paris',
      project_name: project,
      metric_names: ['has-paris'],
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
    });
    expect(created).toMatchObject({
      name: 'paris',
      metric_names: ['has-paris'],
      sample_rate: 1,
      target: { kind: 'root' },
      settle_seconds: 1,
      daily_cost_limit: null,
      reevaluate_on_update: false,
      enabled: true,
      cost_today: 0,
      paused_until: null,
      runs: { done: 0, queued: 0 },
    });
    expect((await get(`/eval-rules/${created.id}`)).json()).toEqual(created);
    expect((await get(`/eval-rules?project_name=${project}`)).json()).toEqual([created]);
    expect((await get(`/eval-rules?project_name=nothing-${randomUUID()}`)).json()).toEqual([]);
    expect(
      (await post('/eval-rules', { name: 'paris', project_name: project, metric_names: ['exact'] })).statusCode,
    ).toBe(409);

    const changed = await patch(`/eval-rules/${created.id}`, { enabled: false, sample_rate: 0.5 });
    expect(changed.json()).toMatchObject({ enabled: false, sample_rate: 0.5, name: 'paris' });

    expect((await get(`/eval-rules/${created.id}`, other.key)).statusCode).toBe(404);
    expect((await patch(`/eval-rules/${created.id}`, { enabled: true }, other.key)).statusCode).toBe(404);
    expect((await call(gw.stack.app, other.key, 'DELETE', `/eval-rules/${created.id}`)).statusCode).toBe(404);
    expect((await get('/eval-rules', other.key)).json()).toEqual([]);

    expect((await call(gw.stack.app, key, 'DELETE', `/eval-rules/${created.id}`)).json()).toMatchObject({
      deleted: true,
    });
    expect((await get(`/eval-rules/${created.id}`)).statusCode).toBe(404);
  });

  it('answers 422 naming an unknown metric, a bad filter or a bad target', async () => {
    const base = { name: 'bad', project_name: 'bad-rules' };
    const unknown = await post('/eval-rules', { ...base, metric_names: ['has-paris', 'nope'] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail).toEqual([
      expect.objectContaining({ loc: ['body', 'metric_names', 1], msg: expect.stringContaining("'nope'") }),
    ]);
    const field = await post('/eval-rules', {
      ...base,
      metric_names: ['exact'],
      filters: [
        { field: 'status', operator: 'equals', value: 'error' },
        { field: 'no_such_field', operator: 'equals', value: 'x' },
      ],
    });
    expect(field.statusCode).toBe(422);
    expect(field.json().detail[0].loc).toEqual(['body', 'filters', 1, 'field']);
    const operator = await post('/eval-rules', {
      ...base,
      metric_names: ['exact'],
      filters: [{ field: 'latency', operator: 'like', value: '1' }],
    });
    expect(operator.json().detail[0].loc).toEqual(['body', 'filters', 0, 'operator']);
    const target = await post('/eval-rules', { ...base, metric_names: ['exact'], target: { kind: 'span' } });
    expect(target.statusCode).toBe(422);
    expect(target.json().detail[0].loc).toEqual(['body', 'target', 'span_name']);
    const rate = await post('/eval-rules', { ...base, metric_names: ['exact'], sample_rate: 1.5 });
    expect(rate.json().detail[0].loc).toEqual(['body', 'sample_rate']);
    const rule = await newRule({ project_name: 'bad-rules', metric_names: ['exact'] });
    const patched = await patch(`/eval-rules/${rule.id}`, { metric_names: ['gone'] });
    expect(patched.statusCode).toBe(422);
    expect(patched.json().detail[0].loc).toEqual(['body', 'metric_names', 0]);
  });

  it("previews what a rule would evaluate at the last day's traffic, and what its judges would cost", async () => {
    const project = `preview-${randomUUID()}`;
    const now = Date.now();
    const at = (msAgo: number) => new Date(now - msAgo).toISOString();
    const older = await writeTrace(project, {
      metadata: { env: 'prod' },
      start_timestamp: at(3600_000),
      end_timestamp: at(3600_000),
    });
    const newest = await writeTrace(project, {
      metadata: { env: 'prod' },
      start_timestamp: at(60_000),
      end_timestamp: at(60_000),
    });
    await writeTrace(project, { metadata: { env: 'dev' }, start_timestamp: at(60_000), end_timestamp: at(60_000) });
    await writeTrace(project, {
      metadata: { env: 'prod' },
      start_timestamp: at(2 * 86_400_000),
      end_timestamp: at(2 * 86_400_000),
    });
    await writeTrace(project, { metadata: { env: 'prod' } }, false); // not ended
    const body = {
      project_name: project,
      metric_names: ['has-paris', 'paid-judge'],
      sample_rate: 0.5,
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }],
    };
    const preview = await eventually(async () => {
      const res = await post('/eval-rules/preview', body);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().matching_24h).toBe(2);
      return res.json();
    });
    expect(preview).toEqual({
      matching_24h: 2,
      sampled_24h: 1,
      example_trace_id: newest,
      judge_metrics: ['paid-judge'],
      estimated_daily_cost: null, // no judge call of it yet to price it by
    });
    expect(older).not.toBe(newest);
    // Once the judge has been called (tried through a rule here), its calls price the estimate.
    await newRule({ project_name: project, metric_names: ['paid-judge'], filters: body.filters });
    await writeTrace(project, { output: 'Paris', metadata: { env: 'prod' } });
    const priced = await eventually(async () => {
      const p = (await post('/eval-rules/preview', body)).json();
      expect(p.estimated_daily_cost).toBeGreaterThan(0);
      return p;
    });
    expect(priced.sampled_24h).toBe(Math.round(priced.matching_24h * 0.5));
    expect((await post('/eval-rules/preview', { ...body, metric_names: ['nope'] })).statusCode).toBe(422);
  });

  it('lets a viewer read rules and refuses it every write', async () => {
    const rule = await newRule({ project_name: 'viewed', metric_names: ['exact'] });
    const viewer = (await post('/api-keys', { role: 'viewer', label: 'vera' })).json().key as string;
    expect((await get(`/eval-rules/${rule.id}`, viewer)).statusCode).toBe(200);
    expect(
      (await post('/eval-rules', { name: 'v', project_name: 'viewed', metric_names: ['exact'] }, viewer)).statusCode,
    ).toBe(403);
    expect((await patch(`/eval-rules/${rule.id}`, { enabled: false }, viewer)).statusCode).toBe(403);
    expect((await call(gw.stack.app, viewer, 'DELETE', `/eval-rules/${rule.id}`)).statusCode).toBe(403);
  });
});

describe('eval rules on live traffic', () => {
  it("score a settled trace's root once, as the span's own evaluations would, and count the run", async () => {
    const project = `live-${randomUUID()}`;
    const rule = await newRule({ project_name: project, metric_names: ['has-paris', 'exact'] });
    const id = await writeTrace(project, { output: 'Paris, of course', target: 'Paris, of course' });
    const scores = await eventually(async () => {
      const s = await scoresOf(id);
      expect(s.map((x) => x.name).sort()).toEqual(['exact', 'has-paris']);
      return s;
    });
    expect(scores.every((s) => s.score === 1)).toBe(true);
    // The official clients' read of the trace shows them, and the score filter of get_trace_logs finds it.
    const found = await post('/get_trace_logs', {
      project_name: project,
      filter_field: 'score:has-paris',
      filter_operator: 'equals',
      filter_value: '1',
    });
    expect(found.json().results.map((r: { trace_id: string }) => r.trace_id)).toEqual([id]);
    await eventually(async () =>
      expect((await get(`/eval-rules/${rule.id}`)).json().runs).toEqual({ done: 1, queued: 0 }),
    );
  });

  it('wait for the root to end and for the trace to settle: late spans are seen, nothing runs twice', async () => {
    const project = `settle-${randomUUID()}`;
    const rule = await newRule({
      project_name: project,
      metric_names: ['has-paris'],
      target: { kind: 'span', span_name: 'retrieve' },
      settle_seconds: 2,
    });
    const root = await writeTrace(project, {}, false);
    const early = randomUUID();
    await post('/trace_log', {
      trace_id: early,
      parent_trace_id: root,
      root_trace_id: root,
      project_name: project,
      trace_name: 'retrieve',
      output: 'Paris',
    });
    await sleep(3000);
    expect(await runsOf(rule.id)).toEqual([]); // the root has not ended
    // The root ends; a late span arrives a second later, within the settle time, and the root is sent again.
    await writeTrace(project, { trace_id: root, output: 'done' });
    await sleep(1000);
    const late = randomUUID();
    await post('/trace_log', {
      trace_id: late,
      parent_trace_id: root,
      root_trace_id: root,
      project_name: project,
      trace_name: 'retrieve',
      output: 'Lyon',
    });
    await writeTrace(project, { trace_id: root, output: 'done' });
    await eventually(async () => {
      const runs = await runsOf(rule.id);
      expect(runs.map((r) => [r.trace_id, r.status, r.generation])).toEqual(
        [
          [early, 'done', 0],
          [late, 'done', 0],
        ].sort(),
      );
    });
    expect((await scoresOf(early)).find((s) => s.name === 'has-paris')?.score).toBe(1);
    expect((await scoresOf(late)).find((s) => s.name === 'has-paris')?.score).toBe(0);
    expect((await scoresOf(root)).find((s) => s.name === 'has-paris')).toBeUndefined();
  });

  it('evaluate only the traces whose root matches every filter, and leave experiment runs alone', async () => {
    const project = `filters-${randomUUID()}`;
    const rule = await newRule({
      project_name: project,
      metric_names: ['has-paris'],
      filters: [
        { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
        { field: 'status', operator: 'not_equals', value: 'error' },
      ],
    });
    const prod = await writeTrace(project, { output: 'Paris', metadata: { env: 'prod' } });
    const dev = await writeTrace(project, { output: 'Paris', metadata: { env: 'dev' } });
    const failed = await writeTrace(project, { output: 'Paris', metadata: { env: 'prod' }, status: 'error' });
    const projectUuid = (await get(`/eval-rules/${rule.id}`)).json().project_uuid;
    const experiment = (await post('/experiment', { name: 'exp', project_uuid: projectUuid })).json();
    const run = await writeTrace(project, {
      output: 'Paris',
      metadata: { env: 'prod' },
      experiment_uuid: experiment.uuid,
    });
    await eventually(async () => expect((await runsOf(rule.id)).map((r) => r.trace_id)).toEqual([prod]));
    await sleep(2500); // every trace has settled by now
    expect((await runsOf(rule.id)).map((r) => r.trace_id)).toEqual([prod]);
    for (const id of [dev, failed, run]) expect((await scoresOf(id)).map((s) => s.name)).not.toContain('has-paris');
  });

  it('sample by trace id: a rate of 0 evaluates nothing, a disabled rule nothing', async () => {
    const project = `sampled-${randomUUID()}`;
    const none = await newRule({ project_name: project, metric_names: ['has-paris'], sample_rate: 0 });
    const off = await newRule({ project_name: project, metric_names: ['exact'], enabled: false });
    const all = await newRule({ project_name: project, metric_names: ['exact'], name: 'all' });
    const id = await writeTrace(project, { output: 'Paris' });
    await eventually(async () => expect(await runsOf(all.id)).toHaveLength(1));
    expect(await runsOf(none.id)).toEqual([]);
    expect(await runsOf(off.id)).toEqual([]);
    expect(id).toBeTruthy();
  });

  it('run once per rule and span when the same span is sent twice and the settle job runs on two workers at once', async () => {
    const project = `once-${randomUUID()}`;
    const rule = await newRule({ project_name: project, metric_names: ['has-paris'] });
    const id = randomUUID();
    await Promise.all([
      writeTrace(project, { trace_id: id, output: 'Paris' }),
      writeTrace(project, { trace_id: id, output: 'Paris' }),
    ]);
    await eventually(async () => expect((await runsOf(rule.id)).map((r) => r.status)).toEqual(['done']));
    // The same settle, run again by two workers at once: the claim lets neither score the span again.
    const evalVersion = async () =>
      (await sql`select versions->'update'->'eval:has-paris' as v from spans where trace_id = ${id}`)[0].v as number;
    const scoredAt = await evalVersion();
    const redis = testRedis();
    const keys = redisKeys(gw.stack.prefix);
    const evals = createProducer('eval', redis, gw.stack.prefix);
    const settles = createProducer('trace-settle', redis, gw.stack.prefix);
    try {
      const [{ project_id }] = await sql`select project_id from eval_rules where id = ${rule.id}`;
      const job = { organization_id: org.id, project_id, root_trace_id: id };
      const workers = [1, 2].map(() => traceSettleProcessor({ sql, redis, keys, evals, settles }));
      await Promise.all(workers.map((settle) => settle(job, {} as never, pino({ level: 'silent' }))));
      expect(await evalVersion()).toBe(scoredAt);
    } finally {
      await Promise.all([evals.close(), settles.close()]);
      await redis.quit();
    }
    expect(await runsOf(rule.id)).toEqual([{ trace_id: id, generation: 0, status: 'done' }]);
  });

  it('evaluate an updated trace again only when the rule says so, and never for its own judge call', async () => {
    const project = `update-${randomUUID()}`;
    const once = await newRule({ project_name: project, metric_names: ['has-paris'] });
    const again = await newRule({ project_name: project, metric_names: ['judge'], reevaluate_on_update: true });
    const id = await writeTrace(project, { output: 'Lyon' });
    await eventually(async () => {
      expect((await runsOf(once.id)).map((r) => r.status)).toEqual(['done']);
      expect((await runsOf(again.id)).map((r) => r.status)).toEqual(['done']);
    });
    // The judge's call is logged in the trace; it must not wake the rule that made it.
    await sleep(2500);
    expect((await runsOf(again.id))[0].generation).toBe(0);
    await writeTrace(project, { trace_id: id, output: 'Paris' });
    await eventually(async () =>
      expect(await runsOf(again.id)).toEqual([{ trace_id: id, generation: 1, status: 'done' }]),
    );
    expect(await runsOf(once.id)).toEqual([{ trace_id: id, generation: 0, status: 'done' }]);
    expect((await scoresOf(id)).find((s) => s.name === 'has-paris')?.score).toBe(0); // the first output's score
  });

  it('count a judge rule’s spend, pause it past its daily limit, and run it again the next day', async () => {
    // The spend and the pause are of PostgreSQL's UTC day: a test begun just before midnight would see the
    // day end between the spend and its reading, so it begins in the next day (the budget's own boundary).
    const [{ left }] = await sql<{ left: number }[]>`
      select extract(epoch from ((now() at time zone 'utc')::date + 1) - (now() at time zone 'utc'))::float8 as left`;
    if (left < 45) await sleep(left * 1000 + 500);
    const project = `budget-${randomUUID()}`;
    const rule = await newRule({ project_name: project, metric_names: ['paid-judge'], daily_cost_limit: 1e-9 });
    const first = await writeTrace(project, { output: 'Paris' });
    await eventually(async () => expect((await scoresOf(first)).find((s) => s.name === 'paid-judge')?.score).toBe(0.5));
    const paused = (await get(`/eval-rules/${rule.id}`)).json() as Rule;
    expect(paused.cost_today).toBeGreaterThan(0);
    expect(Date.parse(paused.paused_until!)).toBeGreaterThan(Date.now());
    const second = await writeTrace(project, { output: 'Paris' });
    await sleep(2500);
    expect((await runsOf(rule.id)).map((r) => r.trace_id)).toEqual([first]);
    // The next day (by PostgreSQL's clock): the day's spend is yesterday's.
    await sql`update eval_rule_spend set day = day - 1 where rule_id = ${rule.id}`;
    expect((await get(`/eval-rules/${rule.id}`)).json()).toMatchObject({ cost_today: 0, paused_until: null });
    const third = await writeTrace(project, { output: 'Paris' });
    await eventually(async () =>
      expect((await runsOf(rule.id)).map((r) => r.trace_id).sort()).toEqual([first, third].sort()),
    );
    expect((await runsOf(rule.id)).map((r) => r.trace_id)).not.toContain(second);
  }, 120_000);

  it('show a failed evaluation on the span with its reason, after retrying it', async () => {
    const project = `failing-${randomUUID()}`;
    const rule = await newRule({ project_name: project, metric_names: ['mute-judge'] });
    const id = await writeTrace(project, { output: 'Paris' });
    const span = await eventually(async () => {
      const s = (await readTrace(gw.stack.app, key, id)).json();
      expect(s.metadata?.sightline_eval_errors?.['mute-judge']).toMatch(/score/i);
      return s;
    }, 30_000);
    expect((span.scores ?? []).map((s: { name: string }) => s.name)).not.toContain('mute-judge');
    // Each attempt called the judge: more than one call was made for the one span.
    const judged = gw.openai.requests.filter((r) => JSON.stringify(r.body).includes('no number here for Paris'));
    expect(judged.length).toBeGreaterThan(1);
    await eventually(async () => expect((await runsOf(rule.id)).map((r) => r.status)).toEqual(['done']));
  });
});

describe('eval rule backfills', () => {
  type Backfill = { id: string; status: string; total: number; done: number; cost: number };
  const ruleOf = async (id: string) => (await get(`/eval-rules/${id}`)).json() as Rule & { backfills: Backfill[] };

  /** `n` ended roots of `project`, a minute apart from `base`, with outputs saying Paris on even ones. */
  async function storedTraces(project: string, base: number, n: number): Promise<string[]> {
    const ids = Array.from({ length: n }, () => randomUUID());
    await Promise.all(
      ids.map((trace_id, i) => {
        const at = new Date(base + i * 60_000).toISOString();
        return writeTrace(project, {
          trace_id,
          start_timestamp: at,
          end_timestamp: at,
          output: i % 2 ? 'Lyon' : 'Paris',
        });
      }),
    );
    return ids;
  }

  it('runs a disabled rule over the stored traces of a range, once each, and shows its progress', async () => {
    const project = `backfill-${randomUUID()}`;
    const base = Date.now() - 3 * 3600_000;
    const ids = await storedTraces(project, base, 20);
    const rule = await newRule({ project_name: project, metric_names: ['has-paris'], enabled: false });
    // Two of the range evaluated before (by an earlier backfill over them): not evaluated again.
    const from = new Date(base + 5 * 60_000).toISOString();
    const to = new Date(base + 15 * 60_000).toISOString();
    const first = await post(`/eval-rules/${rule.id}/backfill`, {
      from: new Date(base + 5 * 60_000).toISOString(),
      to: new Date(base + 7 * 60_000).toISOString(),
    });
    expect(first.statusCode).toBe(202);
    await eventually(async () =>
      expect((await ruleOf(rule.id)).backfills[0]).toMatchObject({ status: 'done', done: 2 }),
    );

    const res = await post(`/eval-rules/${rule.id}/backfill`, { from, to });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'running', total: 10, cost: 0 });
    const done = await eventually(async () => {
      const b = (await ruleOf(rule.id)).backfills[0];
      expect(b).toMatchObject({ id: res.json().id, status: 'done', total: 10, done: 10 });
      return b;
    });
    expect(done.cost).toBe(0);
    const runs = await runsOf(rule.id);
    expect(runs.map((r) => r.trace_id).sort()).toEqual(ids.slice(5, 15).sort());
    expect(runs.every((r) => r.status === 'done' && r.generation === 0)).toBe(true);
    for (const [i, id] of ids.entries()) {
      const score = (await scoresOf(id)).find((s) => s.name === 'has-paris')?.score;
      expect(score, `trace ${i}`).toBe(i >= 5 && i < 15 ? (i % 2 ? 0 : 1) : undefined);
    }
    expect((await post(`/eval-rules/${rule.id}/backfills/${done.id}/cancel`, {})).statusCode).toBe(409);
  });

  it('refuses a range that ends before it starts', async () => {
    const rule = await newRule({ project_name: 'backfill-bad', metric_names: ['exact'] });
    const res = await post(`/eval-rules/${rule.id}/backfill`, {
      from: '2026-01-02T00:00:00Z',
      to: '2026-01-01T00:00:00Z',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'to']);
    expect(
      (await post(`/eval-rules/${randomUUID()}/backfill`, { from: '2026-01-01', to: '2026-01-02' })).statusCode,
    ).toBe(404);
  });

  it('resumes at its cursor, and a cancelled one evaluates nothing more', async () => {
    const project = `resume-${randomUUID()}`;
    const base = Date.now() - 3 * 3600_000;
    const ids = await storedTraces(project, base, 12);
    const rule = await newRule({ project_name: project, metric_names: ['has-paris'], enabled: false });
    const range = { from: new Date(base).toISOString(), to: new Date(base + 12 * 60_000).toISOString() };
    await gw.stack.stopWorker();
    try {
      const cancelled = (await post(`/eval-rules/${rule.id}/backfill`, range)).json() as Backfill;
      const stopped = await post(`/eval-rules/${rule.id}/backfills/${cancelled.id}/cancel`, {});
      expect(stopped.json()).toMatchObject({ status: 'cancelled', done: 0 });
      // A backfill a worker had walked half of (newest first) when it stopped: its cursor is at trace 6.
      const resumed = (await post(`/eval-rules/${rule.id}/backfill`, range)).json() as Backfill;
      const [cursor] = await sql`select start_ts from spans where trace_id = ${ids[6]}`;
      await sql`update eval_rule_backfills set cursor_start_ts = ${cursor.start_ts}, cursor_trace_id = ${ids[6]}, done = 6
        where id = ${resumed.id}`;
    } finally {
      await gw.stack.startWorker();
    }
    await eventually(async () =>
      expect((await ruleOf(rule.id)).backfills[0]).toMatchObject({ status: 'done', done: 12 }),
    );
    expect((await ruleOf(rule.id)).backfills[1]).toMatchObject({ status: 'cancelled', done: 0 });
    expect((await runsOf(rule.id)).map((r) => r.trace_id).sort()).toEqual(ids.slice(0, 6).sort());
  });
});
