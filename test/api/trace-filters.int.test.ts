import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// The traces listing with several filters at once, sorts by a trace's cost and tokens, and experiment runs
// kept apart from production: through the console's POST /traces and the clients' get_trace_logs.

const {
  stack,
  orgs: [org, other],
} = useStack({ orgs: ['trace-filters', 'trace-filters-other'] });

/** Every trace starts from this instant (the listing's time range is the one place reading the clock). */
const NOW = Date.now();
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();

type Trace = {
  name: string;
  env: string;
  user: string;
  cost: number;
  tokens: number;
  status?: string;
  experiment?: boolean;
};
// A root whose cost and tokens are the sum over its one LLM call (so sorting uses the trace's total).
const TRACES: Trace[] = [
  { name: 'rag-query', env: 'prod', user: 'ann', cost: 0.3, tokens: 300 },
  { name: 'rag-query', env: 'prod', user: 'bob', cost: 0.1, tokens: 900 },
  { name: 'rag-query', env: 'staging', user: 'ann', cost: 0.5, tokens: 100 },
  { name: 'agent', env: 'prod', user: 'ann', cost: 0.2, tokens: 500, status: 'error' },
  { name: 'rag-query', env: 'prod', user: 'ann', cost: 0.9, tokens: 50, experiment: true },
];

let projectUuid: string;
let experimentUuid: string;
const roots: string[] = [];

beforeAll(async () => {
  projectUuid = (await call(stack.app, org.key, 'POST', '/project', { name: 'filters' })).json().uuid;
  experimentUuid = (
    await call(stack.app, org.key, 'POST', '/experiment', { name: 'qa', project_uuid: projectUuid, run_name: 'one' })
  ).json().uuid;
  const spans = TRACES.flatMap((t, i) => {
    const root = randomUUID();
    roots.push(root);
    return [
      {
        trace_id: root,
        project_uuid: projectUuid,
        trace_name: t.name,
        metadata: { env: t.env },
        inputs: { question: `question ${i}` },
        output: i === 2 ? `${'long answer '.repeat(40)}` : `answer ${i}`,
        end_user_identifier: t.user,
        status: t.status ?? 'success',
        start_timestamp: at(60 - i),
        end_timestamp: at(59 - i),
        ...(t.experiment && { experiment_uuid: experimentUuid }),
      },
      {
        trace_id: randomUUID(),
        root_trace_id: root,
        parent_trace_id: root,
        project_uuid: projectUuid,
        trace_name: 'llm',
        cost: t.cost,
        total_tokens: t.tokens,
        start_timestamp: at(60 - i),
        end_timestamp: at(59 - i),
      },
    ];
  });
  const res = await call(stack.app, org.key, 'POST', '/trace_logs/batch', { trace_logs: spans });
  expect(res.statusCode, res.body).toBe(200);
  for (const s of spans) expect((await readTrace(stack.app, org.key, s.trace_id)).statusCode).toBe(200);
});

const rows = async (body: object, key = org.key) => {
  const res = await call(stack.app, key, 'POST', '/traces', { project_uuid: projectUuid, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { total: number; results: { trace_id: string; experiment_uuid: string | null }[] };
};
const ids = (page: { results: { trace_id: string }[] }) => page.results.map((r) => roots.indexOf(r.trace_id));

describe('several filters, all of which hold', () => {
  it('narrows the console’s rows by every filter, with the status and the time range', async () => {
    const page = await rows({
      filters: [
        { field: 'trace_name', operator: 'equals', value: 'rag-query' },
        { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
        { field: 'end_user_identifier', operator: 'in', value: 'ann,bob' },
      ],
      status: 'success',
      time_range: '24h',
    });
    expect(page.total).toBe(2);
    expect(ids(page).sort()).toEqual([0, 1]);
    // The single filter of old still applies beside the list.
    const both = await rows({
      filter_field: 'end_user_identifier',
      filter_operator: 'equals',
      filter_value: 'bob',
      filters: [{ field: 'trace_name', operator: 'equals', value: 'rag-query' }],
    });
    expect(ids(both)).toEqual([1]);
  });

  it('answers get_trace_logs the same list, as trees', async () => {
    const res = await call(stack.app, org.key, 'POST', '/get_trace_logs', {
      project_name: 'filters',
      filters: [
        { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
        { field: 'end_user_identifier', operator: 'equals', value: 'ann' },
        { field: 'status', operator: 'equals', value: 'success' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { total: number; results: { trace_id: string; children: unknown[] }[] };
    // The clients' listing keeps the experiment run's trace, as it always did.
    expect(ids(page).sort()).toEqual([0, 4]);
    expect(page.results.every((r) => r.children.length === 1)).toBe(true);
  });

  it('refuses a bad filter with 422 naming its place in the list', async () => {
    const bad = async (filters: object[]) => {
      const res = await call(stack.app, org.key, 'POST', '/traces', { project_uuid: projectUuid, filters });
      expect(res.statusCode, res.body).toBe(422);
      return (res.json() as { detail: { loc: (string | number)[] }[] }).detail[0]!.loc;
    };
    const good = { field: 'trace_name', operator: 'equals', value: 'x' };
    expect(await bad([good, { field: 'latency', operator: 'greater_than', value: 'fast' }])).toEqual([
      'body',
      'filters',
      1,
      'value',
    ]);
    expect(await bad([good, good, { field: 'metadata', operator: 'equals', value: 'prod' }])).toEqual([
      'body',
      'filters',
      2,
      'key',
    ]);
    expect(await bad([{ field: 'nope', operator: 'equals', value: '1' }])).toEqual(['body', 'filters', 0, 'field']);
    expect(await bad([{ field: 'latency', operator: 'around', value: '1' }])).toEqual([
      'body',
      'filters',
      0,
      'operator',
    ]);
    const gtl = await call(stack.app, org.key, 'POST', '/get_trace_logs', {
      filters: [{ field: 'cost', operator: 'like', value: '1' }],
    });
    expect(gtl.statusCode).toBe(422);
    expect(gtl.json().detail[0].loc).toEqual(['body', 'filters', 0, 'operator']);
  });

  it('keeps each organization to its own traces', async () => {
    const filters = [{ field: 'trace_name', operator: 'equals', value: 'rag-query' }];
    expect((await rows({ filters }, other.key)).total).toBe(0);
    const res = await call(stack.app, other.key, 'POST', '/get_trace_logs', { filters, include_experiments: true });
    expect(res.json().total).toBe(0);
  });
});

describe('experiment runs apart', () => {
  it('leaves an experiment run’s traces out of the console unless asked for', async () => {
    const production = await rows({});
    expect(production.total).toBe(4);
    expect(production.results.every((r) => r.experiment_uuid === null)).toBe(true);
    const all = await rows({ include_experiments: true });
    expect(all.total).toBe(5);
    expect(all.results.find((r) => r.trace_id === roots[4])?.experiment_uuid).toBe(experimentUuid);
    const withFilter = await rows({
      include_experiments: true,
      filters: [{ field: 'experiment_uuid', operator: 'exists' }],
    });
    expect(ids(withFilter)).toEqual([4]);
  });

  it('leaves them out of the project’s counts', async () => {
    const res = await call(stack.app, org.key, 'GET', '/projects');
    const summary = (res.json() as { uuid: string; traces: number; traces_24h: number }[]).find(
      (p) => p.uuid === projectUuid,
    );
    expect(summary).toMatchObject({ traces: 4, traces_24h: 4 });
  });

  it('leaves them out of the dashboard and of the users', async () => {
    const dashboard = await call(stack.app, org.key, 'POST', '/dashboard', {
      project_uuid: projectUuid,
      time_range: '24h',
    });
    expect(dashboard.statusCode, dashboard.body).toBe(200);
    expect(dashboard.json().totals).toMatchObject({ traces: 4, errors: 1 });
    expect(dashboard.json().totals.cost).toBeCloseTo(0.3 + 0.1 + 0.5 + 0.2);
    const users = await call(stack.app, org.key, 'POST', '/trace-groups', { project_uuid: projectUuid, by: 'user' });
    const ann = (users.json().results as { key: string; traces: number }[]).find((g) => g.key === 'ann');
    expect(ann?.traces).toBe(3);
  });

  it('lets get_trace_logs leave them out too', async () => {
    const res = await call(stack.app, org.key, 'POST', '/get_trace_logs', {
      project_name: 'filters',
      include_experiments: false,
    });
    expect(res.json().total).toBe(4);
  });
});

describe('content in the rows', () => {
  it('carries the start of the input and output, and the metadata keys asked for', async () => {
    const plain = await rows({ filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'staging' }] });
    expect(plain.results[0]).not.toHaveProperty('input_preview');
    const page = await rows({
      filters: [{ field: 'metadata', key: 'env', operator: 'equals', value: 'staging' }],
      content: true,
      metadata_keys: ['env', 'absent'],
    });
    expect(page.results[0]).toMatchObject({
      input_preview: '{"question": "question 2"}',
      output_preview: 'long answer '.repeat(40).slice(0, 300),
      metadata_values: { env: 'staging' },
    });
  });

  it('refuses too many metadata keys with 422', async () => {
    const res = await call(stack.app, org.key, 'POST', '/traces', {
      project_uuid: projectUuid,
      metadata_keys: Array.from({ length: 11 }, (_, i) => `k${i}`),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'metadata_keys']);
  });
});

describe('sorting', () => {
  const order = async (sort: string) => ids(await rows({ sort, include_experiments: true }));

  it('sorts by the trace’s cost and tokens, both ways', async () => {
    expect(await order('costliest')).toEqual([4, 2, 0, 3, 1]);
    expect(await order('cheapest')).toEqual([1, 3, 0, 2, 4]);
    expect(await order('most_tokens')).toEqual([1, 3, 0, 2, 4]);
    expect(await order('fewest_tokens')).toEqual([4, 2, 0, 3, 1]);
  });

  it('sorts by name and by start, and with filters', async () => {
    expect(await order('name_asc')).toEqual([3, 4, 2, 1, 0]);
    expect(await order('name_desc')).toEqual([0, 1, 2, 4, 3]);
    expect(await order('oldest')).toEqual([0, 1, 2, 3, 4]);
    const page = await rows({
      sort: 'costliest',
      filters: [
        { field: 'trace_name', operator: 'equals', value: 'rag-query' },
        { field: 'end_user_identifier', operator: 'equals', value: 'ann' },
      ],
    });
    expect(ids(page)).toEqual([2, 0]);
  });

  it('refuses an unknown order with 422', async () => {
    const res = await call(stack.app, org.key, 'POST', '/traces', { project_uuid: projectUuid, sort: 'loudest' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'sort']);
  });
});
