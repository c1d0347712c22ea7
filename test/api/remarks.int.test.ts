import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { expectClientReadable } from '../support/client-contract';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key: admin }],
} = useStack({ orgs: ['remarks'] });
let ada: string;
let bob: string;
let viewer: string;
let rootId: string;
let childId: string;

beforeAll(async () => {
  const key = async (role: string, label: string) =>
    (await call(stack.app, admin, 'POST', '/api-keys', { role, label })).json().key as string;
  [ada, bob, viewer] = [
    await key('member', 'ada@example.com'),
    await key('member', 'bob@example.com'),
    await key('viewer', 'vic@example.com'),
  ];
  rootId = randomUUID();
  childId = randomUUID();
  const batch = await call(stack.app, admin, 'POST', '/trace_logs/batch', {
    trace_logs: [
      {
        trace_id: rootId,
        project_name: 'remarks',
        trace_name: 'root',
        comments: [{ comment: 'from the client', user_id: 'sdk', created_at: '2026-01-01 00:00:00' }],
      },
      {
        trace_id: childId,
        root_trace_id: rootId,
        parent_trace_id: rootId,
        project_name: 'remarks',
        trace_name: 'child',
      },
    ],
  });
  expect(batch.statusCode).toBe(200);
  expect((await readTrace(stack.app, admin, rootId)).statusCode).toBe(200);
});

const span = async (key: string, id: string) => (await call(stack.app, key, 'GET', `/span/${id}`)).json();

describe('annotation criteria', () => {
  it('are created by admins, read by everyone, and checked', async () => {
    const created = await call(stack.app, admin, 'POST', '/annotation-criteria', {
      name: 'helpfulness',
      kind: 'score',
      min: 0,
      max: 1,
      description: 'Did it help?',
    });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toMatchObject({
      id: expect.any(String),
      name: 'helpfulness',
      kind: 'score',
      min: 0,
      max: 1,
      options: null,
    });
    expect(
      (await call(stack.app, admin, 'POST', '/annotation-criteria', { name: 'helpfulness', kind: 'value' })).statusCode,
    ).toBe(409);
    expect(
      (await call(stack.app, ada, 'POST', '/annotation-criteria', { name: 'tone', kind: 'value' })).statusCode,
    ).toBe(403);
    for (const bad of [
      { name: 'x', kind: 'score', min: 2, max: 1 },
      { name: 'x', kind: 'value', min: 0 },
      { name: 'x', kind: 'score', options: ['a'] },
      { name: '', kind: 'score' },
    ]) {
      expect((await call(stack.app, admin, 'POST', '/annotation-criteria', bad)).statusCode, JSON.stringify(bad)).toBe(
        422,
      );
    }
    expect(
      (await call(stack.app, viewer, 'GET', '/annotation-criteria')).json().map((c: { name: string }) => c.name),
    ).toContain('helpfulness');
  });
});

describe('comments', () => {
  it('are added by their author, read back beside the client’s, and deleted only by their author', async () => {
    const added = await call(stack.app, ada, 'POST', `/trace_log/${childId}/comments`, { comment: 'Looks wrong here' });
    expect(added.statusCode, added.body).toBe(200);
    const comment = added.json();
    expect(comment).toMatchObject({
      id: expect.any(String),
      comment: 'Looks wrong here',
      user_id: 'ada@example.com',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
    expect((await span(admin, childId)).comments).toEqual([comment]);

    expect((await call(stack.app, bob, 'DELETE', `/trace_log/${childId}/comments/${comment.id}`)).statusCode).toBe(403);
    expect(
      (await call(stack.app, viewer, 'POST', `/trace_log/${childId}/comments`, { comment: 'no' })).statusCode,
    ).toBe(403);
    expect((await call(stack.app, ada, 'DELETE', `/trace_log/${childId}/comments/${comment.id}`)).json()).toEqual({
      id: comment.id,
      deleted: true,
    });
    expect((await span(admin, childId)).comments).toEqual([]);
    expect((await call(stack.app, ada, 'DELETE', `/trace_log/${childId}/comments/${comment.id}`)).statusCode).toBe(404);
    expect(
      (await call(stack.app, ada, 'POST', `/trace_log/${randomUUID()}/comments`, { comment: 'nowhere' })).statusCode,
    ).toBe(404);
  });

  it('by a key without a label (the bootstrap key, say) are its own: /me names their author, and it deletes them', async () => {
    const me = (await call(stack.app, admin, 'GET', '/me')).json();
    expect(me).toMatchObject({ label: null, remark_author: `key:${me.key_id}` });
    expect((await call(stack.app, ada, 'GET', '/me')).json().remark_author).toBe('ada@example.com');
    const added = await call(stack.app, admin, 'POST', `/trace_log/${childId}/comments`, { comment: 'Unsigned' });
    expect(added.statusCode, added.body).toBe(200);
    const comment = added.json();
    expect(comment.user_id).toBe(me.remark_author);
    expect((await call(stack.app, ada, 'DELETE', `/trace_log/${childId}/comments/${comment.id}`)).statusCode).toBe(403);
    expect((await call(stack.app, admin, 'DELETE', `/trace_log/${childId}/comments/${comment.id}`)).json()).toEqual({
      id: comment.id,
      deleted: true,
    });
  });

  it('made at once by two people are both kept, after the client’s own, and the clients can read them', async () => {
    const [a, b] = await Promise.all([
      call(stack.app, ada, 'POST', `/trace_log/${rootId}/comments`, { comment: 'mine' }),
      call(stack.app, bob, 'POST', `/trace_log/${rootId}/comments`, { comment: 'mine too' }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const comments = (await span(admin, rootId)).comments;
    expect(comments.map((c: { comment: string }) => c.comment).sort()).toEqual(['from the client', 'mine', 'mine too']);
    expect(comments[0].comment).toBe('from the client');
    // A client rewriting its comments replaces its own only.
    const update = await call(stack.app, admin, 'PUT', '/trace_log', {
      trace_id: rootId,
      root_trace_id: rootId,
      field_name_to_value_map: { comments: [] },
    });
    expect(update.statusCode).toBe(200);
    expect((await span(admin, rootId)).comments.map((c: { comment: string }) => c.comment).sort()).toEqual([
      'mine',
      'mine too',
    ]);
    const tree = await stack.app.inject({
      method: 'GET',
      url: `/api/svc/v1/trace_log/${rootId}`,
      headers: { 'x-api-key': admin, 'x-sdk-language': 'python' },
    });
    expectClientReadable('GET', '/trace_log/{trace_id}', tree.json());
  });
});

describe('annotations', () => {
  it('are set per person and criterion, checked against it, found by the annotation: filter, and removed', async () => {
    const criterion = (await call(stack.app, admin, 'GET', '/annotation-criteria'))
      .json()
      .find((c: { name: string }) => c.name === 'helpfulness');
    const path = `/trace_log/${rootId}/annotations/${criterion.id}`;
    expect((await call(stack.app, ada, 'PUT', path, { score: 1.5 })).statusCode).toBe(422);
    expect((await call(stack.app, ada, 'PUT', path, { value: 'good' })).statusCode).toBe(422);
    const set = await call(stack.app, ada, 'PUT', path, { score: 0.9 });
    expect(set.statusCode, set.body).toBe(200);
    expect((await call(stack.app, bob, 'PUT', path, { score: 0.2 })).statusCode).toBe(200);
    expect((await span(admin, rootId)).annotations).toEqual({
      [criterion.id]: {
        'ada@example.com': expect.objectContaining({
          user_id: 'ada@example.com',
          score: 0.9,
          annotation_name: 'helpfulness',
          created_at: expect.any(String),
        }),
        'bob@example.com': expect.objectContaining({ user_id: 'bob@example.com', score: 0.2 }),
      },
    });
    const found = async (operator: string, value: string) =>
      (
        await call(stack.app, admin, 'POST', '/get_trace_logs', {
          project_name: 'remarks',
          filter_field: `annotation:score:${criterion.id}`,
          filter_operator: operator,
          filter_value: value,
        })
      )
        .json()
        .results.map((r: { trace_id: string }) => r.trace_id);
    expect(await found('greater_than', '0.8')).toEqual([rootId]);
    expect(await found('greater_than', '0.95')).toEqual([]);

    expect((await call(stack.app, ada, 'DELETE', path)).statusCode).toBe(200);
    expect(Object.keys((await span(admin, rootId)).annotations[criterion.id])).toEqual(['bob@example.com']);
    expect(await found('greater_than', '0.8')).toEqual([]);
    expect(
      (await call(stack.app, ada, 'PUT', `/trace_log/${rootId}/annotations/${randomUUID()}`, { score: 1 })).statusCode,
    ).toBe(404);
  });
});
