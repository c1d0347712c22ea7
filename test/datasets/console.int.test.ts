import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

// The console's dataset routes: list, a page of test cases, rename, delete a dataset or one test case.
const {
  stack,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ worker: false, orgs: ['datasets-console', 'datasets-other'] });

const send = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, k = key) =>
  stack.app.inject({
    method,
    url: `/api/svc/v1${path}`,
    headers: { 'x-api-key': k, ...(body !== undefined && { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function create(name: string, cases = 0, k = key) {
  const res = await send(
    'POST',
    '/collection',
    {
      name,
      column_names: ['q'],
      test_cases: Array.from({ length: cases }, (_, i) => ({ inputs: { q: `q${i}` }, target: `t${i}`, tags: ['x'] })),
    },
    k,
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: number; last_updated_at: string; test_case_ids: number[] };
}
const collection = async (id: number | string) => (await send('GET', `/collection/${id}`)).json();

describe('GET /datasets', () => {
  it("lists the organization's datasets with their sizes, the most recently updated first", async () => {
    const older = await create('list-older', 2);
    const newer = await create('list-newer', 1);
    await create('list-theirs', 1, otherKey);
    const listed = async () =>
      (await send('GET', '/datasets')).json().results.filter((d: { name: string }) => d.name.startsWith('list-'));
    let results = await listed();
    expect(results.map((d: { name: string }) => d.name)).toEqual(['list-newer', 'list-older']);
    expect(results[1]).toEqual({
      id: older.id,
      name: 'list-older',
      column_names: ['q'],
      test_case_count: 2,
      created_at: expect.stringMatching(ISO_Z),
      last_updated_at: older.last_updated_at,
    });

    await send('POST', '/testcases', { id: older.id, test_cases: [{ inputs: { q: 'more' } }] });
    results = await listed();
    expect(results.map((d: { id: number; test_case_count: number }) => [d.id, d.test_case_count])).toEqual([
      [older.id, 3],
      [newer.id, 1],
    ]);
  });
});

describe('GET /datasets/{dataset_id}/test_cases', () => {
  it('answers a page of test cases in id order with the total', async () => {
    const dataset = await create('paged', 5);
    const res = await send('GET', `/datasets/${dataset.id}/test_cases?page=2&page_size=2`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      total: 5,
      page: 2,
      page_size: 2,
      results: [2, 3].map((i) => ({
        id: dataset.test_case_ids[i],
        inputs: { q: `q${i}` },
        target: `t${i}`,
        tags: ['x'],
        created_at: expect.stringMatching(ISO_Z),
      })),
    });
    const first = (await send('GET', `/datasets/${dataset.id}/test_cases`)).json();
    expect([first.page, first.page_size, first.results.length]).toEqual([1, 100, 5]);
    expect((await send('GET', `/datasets/${dataset.id}/test_cases?page=9`)).json()).toMatchObject({
      total: 5,
      results: [],
    });
  });

  it('answers 422 for a page size above 1000 or a page that is not a positive integer', async () => {
    const dataset = await create('paged-bad');
    for (const [query, field] of [
      ['page_size=1001', 'page_size'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1e3', 'page'],
      ['page_size=x', 'page_size'],
    ]) {
      const res = await send('GET', `/datasets/${dataset.id}/test_cases?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc, query).toEqual(['query', field]);
    }
  });
});

describe('PATCH /datasets/{dataset_id}', () => {
  it('renames a dataset, which then reads by its new name only', async () => {
    const dataset = await create('before-rename', 1);
    const res = await send('PATCH', `/datasets/${dataset.id}`, { name: 'after-rename' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: dataset.id,
      name: 'after-rename',
      column_names: ['q'],
      created_at: expect.stringMatching(ISO_Z),
      last_updated_at: expect.stringMatching(ISO_Z),
    });
    expect(await collection('before-rename')).toBeNull();
    expect(await collection('after-rename')).toMatchObject({ id: dataset.id, name: 'after-rename' });
  });

  it('answers 409 when the organization has a dataset of that name, and 422 for a name that is not one', async () => {
    const dataset = await create('rename-me');
    await create('rename-taken');
    await create('rename-free-elsewhere', 0, otherKey);
    const taken = await send('PATCH', `/datasets/${dataset.id}`, { name: 'rename-taken' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ detail: expect.stringContaining('rename-taken') });
    expect((await send('PATCH', `/datasets/${dataset.id}`, { name: 'rename-free-elsewhere' })).statusCode).toBe(200);
    for (const body of [{ name: '' }, { name: '123' }, {}, { name: 7 }]) {
      const res = await send('PATCH', `/datasets/${dataset.id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['body', 'name']);
    }
    expect(await collection(dataset.id)).toMatchObject({ name: 'rename-free-elsewhere' });
  });
});

describe('DELETE /datasets/{dataset_id}', () => {
  it('deletes a dataset with its test cases; it then reads as unknown', async () => {
    const dataset = await create('doomed', 3);
    const res = await send('DELETE', `/datasets/${dataset.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    expect((await send('GET', `/collection/${dataset.id}`)).body).toBe('null');
    expect((await send('GET', `/datasets/${dataset.id}/test_cases`)).statusCode).toBe(404);
    expect((await send('DELETE', `/datasets/${dataset.id}`)).statusCode).toBe(404);
    const ids = (await send('GET', '/datasets')).json().results.map((d: { id: number }) => d.id);
    expect(ids).not.toContain(dataset.id);
  });
});

describe('DELETE /datasets/{dataset_id}/test_cases/{test_case_id}', () => {
  it('deletes one test case: GET /collection no longer has it, and last_updated_at moves on', async () => {
    const dataset = await create('pruned', 3);
    const [keep, drop] = dataset.test_case_ids;
    const res = await send('DELETE', `/datasets/${dataset.id}/test_cases/${drop}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    const after = await collection(dataset.id);
    expect(Object.keys(after.test_cases).map(Number)).toEqual([keep, dataset.test_case_ids[2]]);
    expect(after.last_updated_at > dataset.last_updated_at).toBe(true);
    expect((await send('DELETE', `/datasets/${dataset.id}/test_cases/${drop}`)).statusCode).toBe(404);
  });

  it('answers 404 for a test case of another dataset, which keeps it', async () => {
    const one = await create('pair-one', 1);
    const two = await create('pair-two', 1);
    const res = await send('DELETE', `/datasets/${one.id}/test_cases/${two.test_case_ids[0]}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'test case not found' });
    expect(Object.keys((await collection(two.id)).test_cases)).toHaveLength(1);
  });
});

describe('across organizations and roles', () => {
  it("answers 404 {detail} for another organization's dataset on every route, and changes nothing", async () => {
    const theirs = await create('not-yours', 2, otherKey);
    const requests: [Parameters<typeof send>[0], string, unknown?][] = [
      ['GET', `/datasets/${theirs.id}/test_cases`],
      ['PATCH', `/datasets/${theirs.id}`, { name: 'stolen' }],
      ['DELETE', `/datasets/${theirs.id}/test_cases/${theirs.test_case_ids[0]}`],
      ['DELETE', `/datasets/${theirs.id}`],
      ['GET', `/datasets/${theirs.id}/export?format=csv`],
      ['POST', `/datasets/${theirs.id}/import`, { format: 'jsonl', content: '{"inputs":{"q":"x"}}' }],
    ];
    for (const [method, path, body] of requests) {
      const res = await send(method, path, body);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json()).toEqual({ detail: 'dataset not found' });
    }
    expect((await send('GET', '/datasets')).json().results.map((d: { name: string }) => d.name)).not.toContain(
      'not-yours',
    );
    const intact = (await send('GET', `/collection/${theirs.id}`, undefined, otherKey)).json();
    expect(intact).toMatchObject({ name: 'not-yours', last_updated_at: theirs.last_updated_at });
    expect(Object.keys(intact.test_cases)).toHaveLength(2);
  });

  it('lets a viewer key read but answers 403 on every write route', async () => {
    const made = await call(stack.app, key, 'POST', '/api-keys', { role: 'viewer', label: 'viewer@example.com' });
    const viewer = made.json().key as string;
    const dataset = await create('viewed', 1);
    expect((await send('GET', '/datasets', undefined, viewer)).statusCode).toBe(200);
    expect((await send('GET', `/datasets/${dataset.id}/test_cases`, undefined, viewer)).statusCode).toBe(200);
    expect((await send('GET', `/datasets/${dataset.id}/export?format=jsonl`, undefined, viewer)).statusCode).toBe(200);
    const writes: [Parameters<typeof send>[0], string, unknown?][] = [
      ['PATCH', `/datasets/${dataset.id}`, { name: 'by-viewer' }],
      ['DELETE', `/datasets/${dataset.id}/test_cases/${dataset.test_case_ids[0]}`],
      ['DELETE', `/datasets/${dataset.id}`],
      ['POST', `/datasets/${dataset.id}/import`, { format: 'jsonl', content: '{"inputs":{"q":"x"}}' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await send(method, path, body, viewer);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json()).toEqual({ detail: expect.stringMatching(/role \(viewer\)/) });
    }
    expect(await collection(dataset.id)).toMatchObject({ name: 'viewed', last_updated_at: dataset.last_updated_at });
  });
});

describe('POST /testcases (how the console adds a trace to a dataset)', () => {
  it('answers 422 naming the columns when the inputs do not match the dataset', async () => {
    const dataset = (
      await send('POST', '/collection', { name: 'from-traces', column_names: ['question', 'context'] })
    ).json();
    const res = await send('POST', '/testcases', {
      id: dataset.id,
      test_cases: [{ inputs: { question: 'q', answer: 'a' }, target: 'out' }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      {
        loc: ['body', 'test_cases', 0, 'inputs'],
        msg: "inputs must have the dataset's columns (question, context); unknown column(s): answer; missing column(s): context",
        type: 'value_error',
      },
    ]);
  });
});
