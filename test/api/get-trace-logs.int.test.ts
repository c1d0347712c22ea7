import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { TIME_RANGES } from '@sightline/schemas';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ orgs: ['a', 'b'] });
const project = `list-${randomUUID()}`;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const HOUR = 3600_000;

type Seed = {
  id: string;
  child: string;
  name: string;
  latency: number;
  status: string;
  startedAgo: number;
  metadata: object;
  tags: string[];
  scores?: object[];
  annotations?: object;
};
const seeds: Seed[] = [
  {
    name: 'alpha',
    latency: 9,
    status: 'success',
    startedAgo: 0.5 * HOUR,
    metadata: { env: 'prod', n: '9' },
    tags: ['red'],
    scores: [{ name: 'acc', score: 0.2 }],
  },
  {
    name: 'beta',
    latency: 10,
    status: 'error',
    startedAgo: 2 * HOUR,
    metadata: { env: 'dev', n: '10' },
    tags: ['blue'],
    scores: [{ name: 'acc', score: 0.8 }],
    annotations: { c1: { u1: { created_at: '2026-01-01', user_id: 'u1', score: 1, value: 'good' } } },
  },
  {
    name: 'gamma',
    latency: 100,
    status: 'success',
    startedAgo: 30 * HOUR,
    metadata: { env: 'prod', n: 'many' },
    tags: ['red', 'blue'],
  },
  { name: 'delta', latency: 0.5, status: 'success', startedAgo: 40 * 24 * HOUR, metadata: {}, tags: [] },
  {
    name: 'epsilon',
    latency: 1,
    status: 'success',
    startedAgo: 400 * 24 * HOUR,
    metadata: { env: 'prod' },
    tags: ['green'],
  },
].map((s) => ({ ...s, id: randomUUID(), child: randomUUID() }));

const list = (body: object, k = key) =>
  call(stack.app, k, 'POST', '/get_trace_logs', { project_name: project, ...body });
const names = async (body: object) => {
  const res = await list(body);
  expect(res.statusCode, JSON.stringify(res.json())).toBe(200);
  return res.json().results.map((r: { trace_name: string }) => r.trace_name);
};

beforeAll(async () => {
  for (const s of seeds) {
    const { id, child, startedAgo, ...fields } = s;
    await call(stack.app, key, 'POST', '/trace_log', {
      trace_id: id,
      project_name: project,
      trace_name: fields.name,
      latency: fields.latency,
      status: fields.status,
      start_timestamp: ago(startedAgo),
      metadata: fields.metadata,
      tags: fields.tags,
      scores: fields.scores,
      annotations: fields.annotations,
    });
    await call(stack.app, key, 'POST', '/trace_log', {
      trace_id: child,
      root_trace_id: id,
      parent_trace_id: id,
      project_name: project,
      trace_name: `${fields.name}-child`,
      latency: 1000,
      start_timestamp: ago(startedAgo),
    });
  }
  // Read-your-writes covers GET by id; wait until the listing sees every span.
  for (const s of seeds) await readTrace(stack.app, key, s.id);
});

describe('POST /get_trace_logs', () => {
  it('lists root spans newest first, each with its tree, with exact totals', async () => {
    const res = await list({});
    expect(res.json()).toMatchObject({ total: 5, page: 1, total_pages: 1, page_size: 20 });
    const results = res.json().results;
    expect(results.map((r: { trace_name: string }) => r.trace_name)).toEqual([
      'alpha',
      'beta',
      'gamma',
      'delta',
      'epsilon',
    ]);
    expect(results[0].children).toHaveLength(1);
    expect(results[0].children[0]).toMatchObject({ trace_name: 'alpha-child', depth: 1 });
  });
  it('paginates from page 1', async () => {
    const page2 = (await list({ page: 2, page_size: 2 })).json();
    expect(page2).toMatchObject({ total: 5, page: 2, total_pages: 3, page_size: 2 });
    expect(page2.results.map((r: { trace_name: string }) => r.trace_name)).toEqual(['gamma', 'delta']);
    expect((await list({ page: 4, page_size: 2 })).json().results).toEqual([]);
  });
  it('rejects page 0 and page_size above 100000 with 422', async () => {
    expect((await list({ page: 0 })).statusCode).toBe(422);
    expect((await list({ page_size: 100_001 })).statusCode).toBe(422);
    expect((await list({ page_size: 100_000 })).statusCode).toBe(200);
  });
  it('filters by time range, accepting all ten values', async () => {
    expect(await names({ time_range: '1h' })).toEqual(['alpha']);
    expect(await names({ time_range: '3h' })).toEqual(['alpha', 'beta']);
    expect(await names({ time_range: '7d' })).toEqual(['alpha', 'beta', 'gamma']);
    expect(await names({ time_range: '3m' })).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    for (const range of TIME_RANGES) expect((await list({ time_range: range })).statusCode, range).toBe(200);
    expect((await list({ time_range: '2d' })).statusCode).toBe(422);
  });
  it('filters by status', async () => {
    expect(await names({ status: 'error' })).toEqual(['beta']);
    expect((await list({ status: 'maybe' })).statusCode).toBe(422);
  });
  it('applies every operator, comparing numbers numerically', async () => {
    const f = (filter_field: string, filter_operator: string, filter_value?: string, filter_key?: string) =>
      names({ filter_field, filter_operator, filter_value, filter_key });
    expect(await f('trace_name', 'equals', 'beta')).toEqual(['beta']);
    expect(await f('trace_name', 'not_equals', 'beta')).toEqual(['alpha', 'gamma', 'delta', 'epsilon']);
    expect(await f('trace_name', 'like', 'ETA')).toEqual(['beta']);
    expect(await f('latency', 'greater_than', '9')).toEqual(['beta', 'gamma']);
    expect(await f('latency', 'greater_than_or_equal', '10')).toEqual(['beta', 'gamma']);
    expect(await f('latency', 'less_than', '9')).toEqual(['delta', 'epsilon']);
    expect(await f('latency', 'less_than_or_equal', '9')).toEqual(['alpha', 'delta', 'epsilon']);
    expect(await f('latency', 'between', '1,10')).toEqual(['alpha', 'beta', 'epsilon']);
    expect(await f('trace_name', 'in', 'alpha, gamma')).toEqual(['alpha', 'gamma']);
    expect(await f('error', 'is_null')).toHaveLength(5);
    expect(await f('tags', 'equals', 'red')).toEqual(['alpha', 'gamma']);
    expect(await f('metadata', 'equals', 'prod', 'env')).toEqual(['alpha', 'gamma', 'epsilon']);
    expect(await f('metadata', 'greater_than', '9', 'n')).toEqual(['beta']);
    expect(await f('metadata', 'is_null', undefined, 'env')).toEqual(['delta']);
    expect(await f('metadata', 'exists', undefined, 'n')).toEqual(['alpha', 'beta', 'gamma']);
    expect(await f('score:acc', 'greater_than', '0.5')).toEqual(['beta']);
    expect(await f('score:acc', 'exists')).toEqual(['alpha', 'beta']);
    expect(await f('metadata', 'equals', '1e-20000', 'n')).toEqual([]);
    expect(await f('annotation:score:c1', 'equals', '1')).toEqual(['beta']);
    expect(await f('annotation:value:c1', 'equals', 'good')).toEqual(['beta']);
  });
  it('answers 422 for an unknown field or operator and a value of the wrong type', async () => {
    const bad = async (body: object, loc: string) => {
      const res = await list(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', loc]);
    };
    await bad({ filter_field: 'no_such_field', filter_operator: 'equals', filter_value: 'x' }, 'filter_field');
    await bad({ filter_field: 'latency', filter_operator: 'roughly', filter_value: '1' }, 'filter_operator');
    await bad({ filter_field: 'latency', filter_operator: 'greater_than', filter_value: 'fast' }, 'filter_value');
    await bad({ filter_field: 'trace_id', filter_operator: 'equals', filter_value: 'not-a-uuid' }, 'filter_value');
    await bad({ filter_field: 'metadata', filter_operator: 'equals', filter_value: 'x' }, 'filter_key');
  });
  it('never lets filter text reach SQL: injection strings match nothing and harm nothing', async () => {
    const attacks = ["'; drop table spans; --", "x' or '1'='1", 'metadata) or 1=1 --', '"; delete from spans; --'];
    for (const attack of attacks) {
      for (const body of [
        { filter_field: attack, filter_operator: 'equals', filter_value: 'x' },
        { filter_field: 'metadata', filter_key: attack, filter_operator: 'equals', filter_value: attack },
        { filter_field: 'trace_name', filter_operator: 'in', filter_value: attack },
        { filter_field: `score:${attack}`, filter_operator: 'exists' },
      ]) {
        const res = await list(body);
        expect([200, 422]).toContain(res.statusCode);
        if (res.statusCode === 200) expect(res.json().total).toBe(0);
      }
    }
    expect((await list({})).json().total).toBe(5);
  });
  it('shows nothing of one organization to another', async () => {
    const res = await list({}, otherKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 0, results: [] });
    const all = await call(stack.app, otherKey, 'POST', '/get_trace_logs', {});
    expect(all.json().total).toBe(0);
  });
});
