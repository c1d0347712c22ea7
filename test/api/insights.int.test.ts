import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }, other],
} = useStack({ orgs: ['insights', 'insights-other'] });
let projectUuid: string;

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
// Five traces over the last hours: two sessions, two users, one failure, LLM calls on two models.
const TRACES = [
  {
    minutes: 300,
    session: 's-1',
    user: 'ann',
    latency: 1,
    status: 'success',
    cost: 0.1,
    model: 'gpt-4o-mini',
    score: 0.5,
    feedback: 1,
  },
  {
    minutes: 240,
    session: 's-1',
    user: 'ann',
    latency: 2,
    status: 'error',
    cost: 0.2,
    model: 'gpt-4o-mini',
    score: 1,
    feedback: null,
  },
  {
    minutes: 120,
    session: 's-2',
    user: 'ben',
    latency: 3,
    status: 'success',
    cost: 0.3,
    model: 'claude-3-5-haiku',
    score: null,
    feedback: 0,
  },
  {
    minutes: 60,
    session: 's-2',
    user: 'ben',
    latency: 4,
    status: 'success',
    cost: 0.4,
    model: 'claude-3-5-haiku',
    score: 0,
    feedback: null,
  },
  {
    minutes: 30,
    session: null,
    user: 'ann',
    latency: 10,
    status: 'success',
    cost: 1,
    model: 'gpt-4o-mini',
    score: null,
    feedback: null,
  },
];

beforeAll(async () => {
  const spans = TRACES.flatMap((t, i) => {
    const root = randomUUID();
    return [
      {
        trace_id: root,
        project_name: 'insights',
        trace_name: `turn-${i}`,
        inputs: { message: `question ${i}` },
        output: `answer ${i}`,
        start_timestamp: ago(t.minutes),
        latency: t.latency,
        status: t.status,
        session_id: t.session,
        end_user_identifier: t.user,
        scores: t.score === null ? [] : [{ name: 'quality', score: t.score }],
        feedback_score: t.feedback,
      },
      {
        trace_id: randomUUID(),
        root_trace_id: root,
        parent_trace_id: root,
        project_name: 'insights',
        trace_name: 'llm',
        start_timestamp: ago(t.minutes),
        cost: t.cost,
        input_tokens: 10,
        output_tokens: i,
        configuration: { model: t.model },
      },
    ];
  });
  expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
  expect((await readTrace(stack.app, key, spans.at(-2)!.trace_id)).statusCode).toBe(200);
  projectUuid = (await call(stack.app, key, 'POST', '/project', { name: 'insights' })).json().uuid;
});

describe('the dashboard', () => {
  it('adds up to the traces table, with latency percentiles, cost by model, scores and feedback', async () => {
    const res = await call(stack.app, key, 'POST', '/dashboard', { project_uuid: projectUuid, time_range: '24h' });
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json();
    const rows = (
      await call(stack.app, key, 'POST', '/traces', { project_uuid: projectUuid, time_range: '24h', page_size: 100 })
    ).json().results as { cost: number; input_tokens: number; output_tokens: number; status: string }[];
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((n, r) => n + f(r), 0);
    expect(d.totals).toMatchObject({
      traces: rows.length,
      errors: rows.filter((r) => r.status === 'error').length,
      input_tokens: sum((r) => r.input_tokens),
      output_tokens: sum((r) => r.output_tokens),
    });
    expect(d.totals.traces).toBe(5);
    expect(d.totals.cost).toBeCloseTo(
      sum((r) => r.cost),
      10,
    );
    expect(d.totals.error_rate).toBeCloseTo(0.2, 10);
    // Latencies 1, 2, 3, 4, 10: the median is 3; p95 interpolates between 4 and 10.
    expect(d.totals.latency_p50).toBe(3);
    expect(d.totals.latency_p95).toBeCloseTo(4 + 0.8 * 6, 10);
    expect(d.bucket_seconds).toBe(1800);
    expect(d.buckets.reduce((n: number, b: { traces: number }) => n + b.traces, 0)).toBe(5);
    expect(d.buckets.reduce((n: number, b: { cost: number }) => n + b.cost, 0)).toBeCloseTo(d.totals.cost, 10);
    expect(d.cost_by_model).toEqual([
      { model: 'gpt-4o-mini', calls: 3, cost: expect.closeTo(1.3, 10) },
      { model: 'claude-3-5-haiku', calls: 2, cost: expect.closeTo(0.7, 10) },
    ]);
    const quality = d.scores.filter((s: { name: string }) => s.name === 'quality');
    expect(quality.reduce((n: number, s: { count: number }) => n + s.count, 0)).toBe(3);
    expect(d.feedback.reduce((n: number, f: { count: number }) => n + f.count, 0)).toBe(2);
  });
  it('counts a root’s own tokens and cost instead of its spans’, column by column, as the traces table does', async () => {
    const root = randomUUID();
    const span = (s: object) => ({ project_name: 'insights-own', start_timestamp: ago(5), ...s });
    const spans = [
      span({ trace_id: root, trace_name: 'agent', latency: 1, cost: 2, input_tokens: 7 }),
      span({ trace_id: randomUUID(), root_trace_id: root, parent_trace_id: root, trace_name: 'llm', cost: 0.5 }),
      span({
        trace_id: randomUUID(),
        root_trace_id: root,
        parent_trace_id: root,
        trace_name: 'llm',
        cost: 0.25,
        input_tokens: 100,
        output_tokens: 4,
        configuration: { model: 'gpt-4o-mini' },
      }),
    ];
    expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
    expect((await readTrace(stack.app, key, root)).statusCode).toBe(200);
    const project = (await call(stack.app, key, 'POST', '/project', { name: 'insights-own' })).json().uuid;
    const d = (await call(stack.app, key, 'POST', '/dashboard', { project_uuid: project, time_range: '1h' })).json();
    const [row] = (await call(stack.app, key, 'POST', '/traces', { project_uuid: project, time_range: '1h' })).json()
      .results;
    // The root's cost (2) and input tokens (7) stand for the trace; its output tokens come from its spans (4).
    expect(row).toMatchObject({ cost: 2, input_tokens: 7, output_tokens: 4 });
    expect(d.totals).toMatchObject({ traces: 1, cost: 2, input_tokens: 7, output_tokens: 4 });
    expect(d.buckets).toMatchObject([{ traces: 1, cost: 2, input_tokens: 7, output_tokens: 4 }]);
    // Cost by model is over the calls themselves.
    expect(d.cost_by_model).toEqual([{ model: 'gpt-4o-mini', calls: 1, cost: 0.25 }]);
  });
  it('narrows to the window, and answers 404 for another organization’s project', async () => {
    const hour = (
      await call(stack.app, key, 'POST', '/dashboard', { project_uuid: projectUuid, time_range: '1h' })
    ).json();
    expect(hour.totals).toMatchObject({ traces: 1, cost: 1, latency_p50: 10 });
    expect(hour.bucket_seconds).toBe(60);
    expect((await call(stack.app, other.key, 'POST', '/dashboard', { project_uuid: projectUuid })).statusCode).toBe(
      404,
    );
    expect(
      (await call(stack.app, key, 'POST', '/dashboard', { project_uuid: projectUuid, from: ago(10), to: ago(20) }))
        .statusCode,
    ).toBe(422);
  });
});

describe('the dashboard of the traces page’s filters', () => {
  /** The one clock of these traces. */
  const NOW = Date.now();
  const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
  // Each root's cost is that of its one LLM call; its question is what a search finds.
  const FILTERED = [
    {
      name: 'rag-query',
      env: 'prod',
      user: 'ann',
      cost: 0.3,
      model: 'gpt-4o-mini',
      status: 'success',
      question: 'How do I get a refund for my order?',
    },
    {
      name: 'rag-query',
      env: 'prod',
      user: 'bob',
      cost: 0.1,
      model: 'claude-3-5-haiku',
      status: 'error',
      question: 'Where is my refund?',
    },
    {
      name: 'rag-query',
      env: 'staging',
      user: 'ann',
      cost: 0.5,
      model: 'gpt-4o-mini',
      status: 'success',
      question: 'What is the refund policy?',
    },
    {
      name: 'agent',
      env: 'prod',
      user: 'ann',
      cost: 0.2,
      model: 'gpt-4o-mini',
      status: 'error',
      question: 'Track my parcel',
    },
    {
      name: 'rag-query',
      env: 'prod',
      user: 'ann',
      cost: 0.9,
      model: 'gpt-4o-mini',
      status: 'success',
      question: 'Refund, please',
      experiment: true,
    },
  ];
  let project: string;
  const ragInProd = [
    { field: 'trace_name', operator: 'equals', value: 'rag-query' },
    { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
  ];
  const board = async (body: object, k = key) => {
    const res = await call(stack.app, k, 'POST', '/dashboard', { project_uuid: project, time_range: '24h', ...body });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  beforeAll(async () => {
    project = (await call(stack.app, key, 'POST', '/project', { name: 'insights-filters' })).json().uuid;
    const experiment = (
      await call(stack.app, key, 'POST', '/experiment', { name: 'qa', project_uuid: project, run_name: 'one' })
    ).json().uuid;
    const spans = FILTERED.flatMap((t, i) => {
      const root = randomUUID();
      return [
        {
          trace_id: root,
          project_uuid: project,
          trace_name: t.name,
          metadata: { env: t.env },
          inputs: { question: t.question },
          end_user_identifier: t.user,
          status: t.status,
          latency: 1,
          start_timestamp: at(60 - i),
          ...(t.experiment && { experiment_uuid: experiment }),
        },
        {
          trace_id: randomUUID(),
          root_trace_id: root,
          parent_trace_id: root,
          project_uuid: project,
          trace_name: 'llm',
          cost: t.cost,
          configuration: { model: t.model },
          start_timestamp: at(60 - i),
        },
      ];
    });
    expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
    expect((await readTrace(stack.app, key, spans.at(-2)!.trace_id)).statusCode).toBe(200);
    // Another organization's traces of the same name and metadata, in a project of the same name.
    const theirs = (await call(stack.app, other.key, 'POST', '/project', { name: 'insights-filters' })).json().uuid;
    const root = randomUUID();
    const batch = [{ trace_id: root, project_uuid: theirs, trace_name: 'rag-query', metadata: { env: 'prod' } }];
    expect((await call(stack.app, other.key, 'POST', '/trace_logs/batch', { trace_logs: batch })).statusCode).toBe(200);
    expect((await readTrace(stack.app, other.key, root)).statusCode).toBe(200);
  });

  it('counts the traces every filter matches, as the traces page lists them', async () => {
    const d = await board({ filters: ragInProd });
    const listed = await call(stack.app, key, 'POST', '/traces', {
      project_uuid: project,
      time_range: '24h',
      filters: ragInProd,
    });
    expect(d.totals.traces).toBe(listed.json().total);
    expect(d.totals).toMatchObject({ traces: 2, errors: 1, error_rate: 0.5, cost: expect.closeTo(0.4, 10) });
    expect(d.cost_by_model).toEqual([
      { model: 'gpt-4o-mini', calls: 1, cost: expect.closeTo(0.3, 10) },
      { model: 'claude-3-5-haiku', calls: 1, cost: expect.closeTo(0.1, 10) },
    ]);
    // A third filter narrows further; every filter of the list must hold.
    const ann = await board({
      filters: [...ragInProd, { field: 'end_user_identifier', operator: 'in', value: 'ann' }],
    });
    expect(ann.totals).toMatchObject({ traces: 1, errors: 0, cost: expect.closeTo(0.3, 10) });
    // Without filters: production's four traces.
    expect((await board({})).totals).toMatchObject({ traces: 4, errors: 2, cost: expect.closeTo(1.1, 10) });
  });

  it('plots errors and the cost of each model in the same buckets as the traces', async () => {
    const d = await board({});
    const starts = new Set(d.buckets.map((b: { start: string }) => b.start));
    const byModel = (d.cost_by_model_buckets as { start: string; model: string; calls: number; cost: number }[]).reduce(
      (m, b) => {
        expect(starts.has(b.start)).toBe(true);
        return m.set(b.model, (m.get(b.model) ?? 0) + b.cost);
      },
      new Map<string, number>(),
    );
    for (const m of d.cost_by_model) expect(byModel.get(m.model)).toBeCloseTo(m.cost, 10);
    expect(d.buckets.reduce((n: number, b: { errors: number }) => n + b.errors, 0)).toBe(2);
  });

  it('leaves experiment runs out unless they are asked for', async () => {
    expect((await board({ filters: ragInProd })).totals.traces).toBe(2);
    const all = await board({ filters: ragInProd, include_experiments: true });
    expect(all.totals).toMatchObject({ traces: 3, cost: expect.closeTo(1.3, 10) });
    expect(all.cost_by_model[0]).toEqual({ model: 'gpt-4o-mini', calls: 2, cost: expect.closeTo(1.2, 10) });
  });

  it('keeps each organization to its own traces', async () => {
    const res = await call(stack.app, other.key, 'POST', '/dashboard', { project_uuid: project, filters: ragInProd });
    expect(res.statusCode).toBe(404);
    const mine = await board({ filters: ragInProd, include_experiments: true });
    expect(mine.totals.traces).toBe(3);
  });

  it('counts the traces of the status and the search, as the traces page lists them', async () => {
    const cases: [object, { traces: number; errors: number }][] = [
      [{ status: 'error' }, { traces: 2, errors: 2 }],
      [{ search: 'refund' }, { traces: 3, errors: 1 }],
      [
        { search: 'refund', status: 'error' },
        { traces: 1, errors: 1 },
      ],
      [{ search: '"refund policy"' }, { traces: 1, errors: 0 }],
      [{ search: '-refund' }, { traces: 1, errors: 1 }],
      [
        { search: 'refund', status: 'success', filters: ragInProd },
        { traces: 1, errors: 0 },
      ],
      [
        { search: 'refund', filters: ragInProd, include_experiments: true },
        { traces: 3, errors: 1 },
      ],
    ];
    for (const [body, totals] of cases) {
      const listed = await call(stack.app, key, 'POST', '/traces', {
        project_uuid: project,
        time_range: '24h',
        ...body,
      });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json().total, JSON.stringify(body)).toBe(totals.traces);
      const d = await board(body);
      expect(d.totals, JSON.stringify(body)).toMatchObject(totals);
      expect(d.buckets.reduce((n: number, b: { traces: number }) => n + b.traces, 0)).toBe(totals.traces);
    }
    // The cost is that of the matching traces alone.
    const refunds = await board({ search: 'refund', status: 'success' });
    expect(refunds.totals.cost).toBeCloseTo(0.3 + 0.5, 10);
    expect(refunds.cost_by_model).toEqual([{ model: 'gpt-4o-mini', calls: 2, cost: expect.closeTo(0.8, 10) }]);
  });

  it('refuses a status or a search the listing refuses, with 422', async () => {
    const refused = async (body: object) => {
      const res = await call(stack.app, key, 'POST', '/dashboard', { project_uuid: project, ...body });
      expect(res.statusCode, res.body).toBe(422);
      return res.json().detail[0].loc;
    };
    expect(await refused({ status: 'failed' })).toEqual(['body', 'status']);
    // Nothing the index knows: the listing refuses it too rather than read every span.
    expect(await refused({ search: '&' })).toEqual(['body', 'search']);
    expect(await refused({ search: 'x'.repeat(501) })).toEqual(['body', 'search']);
  });

  it('has its status and search in the OpenAPI document', async () => {
    const doc = (await stack.app.inject({ url: '/openapi.json' })).json();
    const [path] = Object.keys(doc.paths).filter((p) => p.endsWith('/dashboard'));
    const body = doc.paths[path!].post.requestBody.content['application/json'].schema.properties;
    expect(body.status.anyOf ?? [body.status]).toContainEqual(expect.objectContaining({ enum: ['success', 'error'] }));
    expect(body.search.description).toMatch(/words and "phrases"/);
  });

  it('refuses a bad filter with 422, naming its place in the list', async () => {
    const refused = async (filters: object[]) => {
      const res = await call(stack.app, key, 'POST', '/dashboard', { project_uuid: project, filters });
      expect(res.statusCode, res.body).toBe(422);
      return res.json().detail[0].loc;
    };
    expect(await refused([ragInProd[0]!, { field: 'no_such_field', operator: 'equals', value: 'x' }])).toEqual([
      'body',
      'filters',
      1,
      'field',
    ]);
    expect(await refused([{ field: 'latency', operator: 'like', value: 'x' }])).toEqual([
      'body',
      'filters',
      0,
      'operator',
    ]);
    expect(await refused([ragInProd[0]!, ragInProd[1]!, { field: 'trace_name', operator: 'sounds_like' }])).toEqual([
      'body',
      'filters',
      2,
      'operator',
    ]);
  });
});

describe('sessions and users', () => {
  it('groups traces by session and by user with counts, cost, errors and feedback', async () => {
    const sessions = (
      await call(stack.app, key, 'POST', '/trace-groups', { project_uuid: projectUuid, by: 'session' })
    ).json();
    expect(sessions.total).toBe(2);
    expect(sessions.results.map((s: { key: string }) => s.key)).toEqual(['s-2', 's-1']);
    expect(sessions.results[1]).toMatchObject({
      key: 's-1',
      traces: 2,
      errors: 1,
      latency_avg: 1.5,
      cost: expect.closeTo(0.3, 10),
      feedback_mean: 1,
    });
    const users = (
      await call(stack.app, key, 'POST', '/trace-groups', { project_uuid: projectUuid, by: 'user' })
    ).json();
    expect(users.results.map((u: { key: string; traces: number }) => [u.key, u.traces])).toEqual([
      ['ann', 3],
      ['ben', 2],
    ]);
  });
  it('counts a session’s cost as the traces table does: a root without its own, the sum of its spans', async () => {
    const root = randomUUID();
    const span = (s: object) => ({ project_name: 'insights-groups', start_timestamp: ago(5), ...s });
    const spans = [
      span({ trace_id: root, trace_name: 'agent', session_id: 'costed', end_user_identifier: 'cara' }),
      span({ trace_id: randomUUID(), root_trace_id: root, parent_trace_id: root, trace_name: 'llm', cost: 0.5 }),
      span({ trace_id: randomUUID(), root_trace_id: root, parent_trace_id: root, trace_name: 'llm', cost: 0.25 }),
    ];
    expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
    expect((await readTrace(stack.app, key, root)).statusCode).toBe(200);
    const project = (await call(stack.app, key, 'POST', '/project', { name: 'insights-groups' })).json().uuid;
    const [row] = (await call(stack.app, key, 'POST', '/traces', { project_uuid: project })).json().results;
    expect(row.cost).toBeCloseTo(0.75, 10);
    for (const by of ['session', 'user']) {
      const groups = (await call(stack.app, key, 'POST', '/trace-groups', { project_uuid: project, by })).json();
      expect(groups.results, by).toMatchObject([{ traces: 1, cost: expect.closeTo(0.75, 10) }]);
    }
  });
  it('reads one session as a conversation, in order', async () => {
    const session = (
      await call(stack.app, key, 'POST', '/trace-group', { project_uuid: projectUuid, by: 'session', key: 's-2' })
    ).json();
    expect(session.traces.map((t: { inputs: unknown; output: unknown }) => [t.inputs, t.output])).toEqual([
      [{ message: 'question 2' }, 'answer 2'],
      [{ message: 'question 3' }, 'answer 3'],
    ]);
  });
});
