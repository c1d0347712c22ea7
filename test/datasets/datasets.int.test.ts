import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ worker: false, orgs: ['org', 'org'] });

const post = (path: string, body: unknown, k = key) => call(stack.app, k, 'POST', path, body);
const get = (identifier: string | number, k = key) => call(stack.app, k, 'GET', `/collection/${identifier}`);
const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('datasets', () => {
  it('creates a dataset and reads it back by id and by name, with test cases keyed by id', async () => {
    const res = await post('/collection', {
      name: 'qa',
      column_names: ['question', 'context'],
      test_cases: [
        { inputs: { question: 'q1', context: 'c1' }, target: 'a1', tags: ['easy'] },
        { inputs: { question: 'q2', context: { nested: true } }, target: 42 },
      ],
    });
    expect(res.statusCode).toBe(200);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(Number),
      last_updated_at: expect.stringMatching(ISO_Z),
      test_case_ids: [expect.any(Number), expect.any(Number)],
    });
    const [first, second] = created.test_case_ids;
    expect(second).toBeGreaterThan(first);

    const byId = (await get(created.id)).json();
    expect(byId).toEqual({
      id: created.id,
      name: 'qa',
      column_names: ['question', 'context'],
      created_at: expect.stringMatching(ISO_Z),
      last_updated_at: expect.stringMatching(ISO_Z),
      test_cases: {
        [String(first)]: {
          id: first,
          inputs: { question: 'q1', context: 'c1' },
          target: 'a1',
          tags: ['easy'],
          test_case_collection_id: created.id,
        },
        [String(second)]: {
          id: second,
          inputs: { question: 'q2', context: '{"nested":true}' },
          target: '42',
          tags: [],
          test_case_collection_id: created.id,
        },
      },
    });
    expect((await get('qa')).json()).toEqual(byId);
  });

  it("answers 200 null for an unknown dataset, and for another organization's", async () => {
    const created = (await post('/collection', { name: 'mine', column_names: ['x'] })).json();
    for (const res of [
      await get('no-such-dataset'),
      await get(999_999_999),
      await get(created.id, otherKey),
      await get('mine', otherKey),
    ]) {
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('null');
    }
  });

  it('enforces the column rules with 422 and keeps target and tags reserved', async () => {
    const wrong = await post('/collection', {
      name: 'cols',
      column_names: ['a', 'b'],
      test_cases: [{ inputs: { a: '1' } }, { inputs: { a: '1', b: '2', c: '3' } }],
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().detail.map((d: { loc: unknown }) => d.loc)).toEqual([
      ['body', 'test_cases', 0, 'inputs'],
      ['body', 'test_cases', 1, 'inputs'],
    ]);
    expect((await post('/collection', { name: 'reserved', column_names: ['target'] })).statusCode).toBe(422);
    expect((await get('cols')).body).toBe('null');
  });

  it('answers 409 for a duplicate name within the organization only', async () => {
    expect((await post('/collection', { name: 'dup', column_names: ['x'] })).statusCode).toBe(200);
    const again = await post('/collection', { name: 'dup', column_names: ['x'] });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ detail: expect.stringContaining('dup') });
    expect((await post('/collection', { name: 'dup', column_names: ['x'] }, otherKey)).statusCode).toBe(200);
  });

  it("adds test cases by id or name, in order, creating an unknown name from the first case's columns", async () => {
    const created = (
      await post('/collection', { name: 'grow', column_names: ['q'], test_cases: [{ inputs: { q: '0' } }] })
    ).json();
    const before = (await get(created.id)).json().last_updated_at;
    const byId = await post('/testcases', {
      id: created.id,
      test_cases: [{ inputs: { q: '1' } }, { inputs: { q: '2' } }],
    });
    expect(byId.statusCode).toBe(200);
    const ids = byId.json();
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBeGreaterThan(ids[0]);
    const after = (await get(created.id)).json();
    expect(Object.keys(after.test_cases)).toHaveLength(3);
    expect(after.test_cases[String(ids[1])].inputs).toEqual({ q: '2' });
    expect(after.last_updated_at > before).toBe(true);

    const fresh = await post('/testcases', {
      name: 'born-from-cases',
      test_cases: [{ inputs: { a: 'x', b: 'y' }, target: true }],
    });
    expect(fresh.statusCode).toBe(200);
    expect((await get('born-from-cases')).json()).toMatchObject({
      column_names: ['a', 'b'],
      test_cases: { [String(fresh.json()[0])]: { target: 'true' } },
    });
  });

  it('refuses columns that are reserved, repeated, empty or fooled by object built-ins, and all-digit names', async () => {
    const refused = async (path: string, body: object) =>
      expect((await post(path, body)).statusCode, JSON.stringify(body)).toBe(422);
    await refused('/collection', { name: 'rep', column_names: ['a', 'a'] });
    await refused('/collection', { name: 'res-tags', column_names: ['tags'] });
    await refused('/collection', { name: 'builtin', column_names: ['toString'], test_cases: [{ inputs: {} }] });
    await refused('/collection', { name: '007', column_names: ['a'] });
    await refused('/testcases', { name: 'from-reserved', test_cases: [{ inputs: { target: '1', tags: 'x' } }] });
    await refused('/testcases', { name: 'from-nothing', test_cases: [{ inputs: {} }] });
    await refused('/testcases', { name: '42', test_cases: [{ inputs: { a: '1' } }] });
    for (const name of ['rep', 'builtin', 'from-reserved', 'from-nothing']) expect((await get(name)).body).toBe('null');
  });

  it('refuses test cases whose columns differ, a request without name or id, and an unknown id', async () => {
    await post('/collection', { name: 'strict', column_names: ['q'] });
    expect((await post('/testcases', { name: 'strict', test_cases: [{ inputs: { other: '1' } }] })).statusCode).toBe(
      422,
    );
    const neither = await post('/testcases', { test_cases: [{ inputs: { q: '1' } }] });
    expect(neither.statusCode).toBe(422);
    expect(neither.json().detail[0].loc).toEqual(['body', 'name']);
    expect((await post('/testcases', { id: 987654321, test_cases: [{ inputs: { q: '1' } }] })).statusCode).toBe(404);
    const foreign = (await post('/collection', { name: 'theirs', column_names: ['q'] }, otherKey)).json();
    expect((await post('/testcases', { id: foreign.id, test_cases: [{ inputs: { q: '1' } }] })).statusCode).toBe(404);
    expect(Object.keys((await get(foreign.id, otherKey)).json().test_cases)).toHaveLength(0);
    expect(Object.keys((await get('strict')).json().test_cases)).toHaveLength(0);
  });

  it("updates a test case's inputs, target and tags, and refuses unknown columns and pairs", async () => {
    const created = (
      await post('/collection', {
        name: 'editable',
        column_names: ['q', 'ctx'],
        test_cases: [{ inputs: { q: 'old', ctx: 'c' }, target: 'a' }],
      })
    ).json();
    const [caseId] = created.test_case_ids;
    const res = await post(`/update_test_case/${created.id}/${caseId}`, {
      inputs: { q: 'new' },
      target: 3.5,
      tags: ['fixed'],
    });
    expect(res.statusCode).toBe(200);
    const after = (await get(created.id)).json();
    expect(after.test_cases[String(caseId)]).toEqual({
      id: caseId,
      inputs: { q: 'new', ctx: 'c' },
      target: '3.5',
      tags: ['fixed'],
      test_case_collection_id: created.id,
    });
    expect(after.last_updated_at > created.last_updated_at).toBe(true);
    expect((await post(`/update_test_case/${created.id}/${caseId}`, { inputs: { nope: '1' } })).statusCode).toBe(422);
    expect((await post(`/update_test_case/${created.id}/999999999`, { target: 'x' })).statusCode).toBe(404);
    expect((await post(`/update_test_case/${created.id}/${caseId}`, { target: 'stolen' }, otherKey)).statusCode).toBe(
      404,
    );
    expect((await get(created.id)).json().test_cases[String(caseId)].target).toBe('3.5');
  });

  it('leaves alone the fields an update sends as null, as the Python client sends every field', async () => {
    const created = (
      await post('/collection', {
        name: 'nulls-kept',
        column_names: ['q'],
        test_cases: [{ inputs: { q: 'old' }, target: 'a', tags: ['t'] }],
      })
    ).json();
    const [caseId] = created.test_case_ids;
    expect(
      (await post(`/update_test_case/${created.id}/${caseId}`, { inputs: { q: 'new' }, target: null, tags: null }))
        .statusCode,
    ).toBe(200);
    expect((await get(created.id)).json().test_cases[String(caseId)]).toMatchObject({
      inputs: { q: 'new' },
      target: 'a',
      tags: ['t'],
    });
    expect(
      (await post(`/update_test_case/${created.id}/${caseId}`, { inputs: null, target: 'b', tags: null })).statusCode,
    ).toBe(200);
    expect((await get(created.id)).json().test_cases[String(caseId)]).toMatchObject({
      inputs: { q: 'new' },
      target: 'b',
      tags: ['t'],
    });
  });
});
