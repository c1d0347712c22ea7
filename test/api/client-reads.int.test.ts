import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { expectClientReadable } from '../support/client-contract';
import { useStack } from '../support/fixtures';

// What the official clients send and read back, beyond the captured traffic of test/conformance: empty
// ids, null configuration members, empty collections, and trees in the clients' dialect.

const {
  stack,
  sql,
  orgs: [reads],
} = useStack({ orgs: ['reads'] });
const { key } = reads;
let org: string;
beforeAll(() => {
  org = reads.id;
});

const PYTHON = { 'x-sdk-language': 'python', 'x-sdk-version': '0.2.219' };
/** A request as an official client sends it: with x-sdk-language, and its answer checked against their contract. */
async function asClient(method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await stack.app.inject({
    method,
    url: `/api/svc/v1${path}`,
    headers: { 'x-api-key': key, ...PYTHON, ...(body !== undefined && { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
  expectClientReadable(method, path, res.json());
  return res.json();
}
const post = (path: string, body: unknown) => call(stack.app, key, 'POST', path, body);

/** A root with a child and a grandchild, the root sent last (as clients do: a span is sent when it ends). */
async function writeTree(project: string, extra: Record<string, unknown> = {}) {
  const [root, child, grandchild] = [randomUUID(), randomUUID(), randomUUID()];
  const span = (trace_id: string, parent: string, name: string) => ({
    trace_id,
    root_trace_id: root,
    parent_trace_id: parent,
    project_name: project,
    trace_name: name,
    start_timestamp: '2026-03-04T05:06:07.000Z',
    ...extra,
  });
  for (const s of [
    span(grandchild, child, 'grandchild'),
    span(child, root, 'child'),
    { ...span(root, root, 'root'), children: [child] },
  ]) {
    expect((await post('/trace_log', s)).statusCode).toBe(200);
  }
  expect((await readTrace(stack.app, key, root)).statusCode).toBe(200);
  return { root, child, grandchild };
}

describe('optional ids sent as empty strings', () => {
  it('read as absent on span writes, updates and feedback', async () => {
    const trace_id = randomUUID();
    const res = await post('/trace_log', {
      trace_id,
      root_trace_id: '',
      parent_trace_id: '',
      project_uuid: '',
      project_name: 'empty-ids',
      experiment_uuid: '',
      deployment_id: '',
      trace_name: 'alone',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await post('/trace_log', { trace_id: '', project_name: 'empty-ids' })).statusCode).toBe(200);
    expect(
      (
        await call(stack.app, key, 'PUT', '/trace_log', {
          trace_id,
          root_trace_id: '',
          field_name_to_value_map: { output: 'done', experiment_uuid: '' },
        })
      ).statusCode,
    ).toBe(200);
    expect((await post('/feedback', { trace_id: '', inference_id: trace_id, score: 0.5 })).statusCode).toBe(200);
    const span = (await readTrace(stack.app, key, trace_id)).json();
    expect(span).toMatchObject({
      trace_id,
      root_trace_id: trace_id,
      parent_trace_id: trace_id,
      experiment_uuid: null,
      deployment_id: null,
      output: 'done',
      feedback_score: 0.5,
    });
  });

  it('are still refused when they are not empty and not UUIDs', async () => {
    const res = await post('/trace_log', { project_name: 'empty-ids', root_trace_id: 'not-a-uuid' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      { loc: ['body', 'root_trace_id'], msg: 'must be a UUID', type: expect.any(String) },
    ]);
    expect((await post('/feedback', { trace_id: '', score: 0.5 })).statusCode).toBe(422);
  });
});

describe('configuration members sent as null', () => {
  const python = {
    model: null,
    provider: null,
    model_params: { temp: 1, top_p: 1, max_length: null, response_format: null },
    messages: null,
    history: null,
    functions: null,
    function_call: null,
  };

  it('are left out of what is stored and answered, in both dialects', async () => {
    const trace_id = randomUUID();
    expect((await post('/trace_log', { trace_id, project_name: 'nulls', configuration: python })).statusCode).toBe(200);
    expect((await readTrace(stack.app, key, trace_id)).json().configuration).toEqual({
      model_params: { temp: 1, top_p: 1 },
    });
    expect((await asClient('GET', `/trace_log/${trace_id}`)).configuration).toEqual({
      model_params: { temp: 1, top_p: 1 },
    });
    const [stored] =
      await sql`select configuration from spans where organization_id = ${org} and trace_id = ${trace_id}`;
    expect(stored.configuration).toEqual({ model_params: { temp: 1, top_p: 1 } });
  });

  it('are kept in messages, and a message without content gets a null one, as the Python client requires it', async () => {
    const trace_id = randomUUID();
    const messages = [
      { role: 'user', content: null },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function' }] },
    ];
    expect(
      (await post('/trace_log', { trace_id, project_name: 'nulls', configuration: { model: 'm', messages } }))
        .statusCode,
    ).toBe(200);
    expect((await asClient('GET', `/trace_log/${trace_id}`)).configuration.messages).toEqual([
      messages[0],
      { ...messages[1], content: null },
    ]);
  });

  it('are cleaned from rows stored before, by migration 00007', async () => {
    const [kept, cleaned, emptied] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [kept, cleaned, emptied]) {
      expect((await post('/trace_log', { trace_id: id, project_name: 'nulls' })).statusCode).toBe(200);
      expect((await readTrace(stack.app, key, id)).statusCode).toBe(200);
    }
    const set = (id: string, configuration: unknown) =>
      sql`update spans set configuration = ${sql.json(configuration as never)} where organization_id = ${org} and trace_id = ${id}`;
    const messages = [{ role: 'user', content: null }];
    await set(kept, {
      model: 'm',
      model_params: { temp: 0 },
      functions: [{ name: 'f', parameters: { default: null } }],
    });
    await set(cleaned, { ...python, model: 'm', messages: [...messages, { role: 'assistant', tool_calls: [] }] });
    await set(emptied, { messages: null });
    await sql.unsafe(
      readFileSync(new URL('../../libs/db/migrations/00007_client_reads/index.sql', import.meta.url), 'utf8'),
    );
    const rows =
      await sql`select trace_id, configuration from spans where organization_id = ${org} and trace_id in ${sql([kept, cleaned, emptied])}`;
    const byId = Object.fromEntries(rows.map((r) => [r.trace_id, r.configuration]));
    // Nulls deeper down (a message's content, a schema's default) are data, and stay.
    expect(byId[kept]).toEqual({
      model: 'm',
      model_params: { temp: 0 },
      functions: [{ name: 'f', parameters: { default: null } }],
    });
    expect(byId[cleaned]).toEqual({
      model: 'm',
      model_params: { temp: 1, top_p: 1 },
      messages: [...messages, { role: 'assistant', tool_calls: [], content: null }],
    });
    expect(byId[emptied]).toEqual({});
  });
});

describe('collections with nothing in them', () => {
  it('are answered empty, never null: scores, images, comments and annotations', async () => {
    const trace_id = randomUUID();
    expect(
      (
        await post('/trace_log', {
          trace_id,
          project_name: 'empty',
          scores: null,
          images: null,
          comments: null,
          annotations: null,
        })
      ).statusCode,
    ).toBe(200);
    expect((await readTrace(stack.app, key, trace_id)).json()).toMatchObject({
      scores: [],
      images: [],
      comments: [],
      annotations: {},
    });
    expect(await asClient('GET', `/trace_log/${trace_id}`)).toMatchObject({
      scores: [],
      images: [],
      comments: [],
      annotations: {},
    });
  });

  it('hold what was sent otherwise', async () => {
    const trace_id = randomUUID();
    const annotations = {
      '12': { u1: { created_at: '2026-01-01T00:00:00Z', user_id: 'u1', score: 1, annotation_name: 'tone' } },
    };
    const images = [{ url: 'https://example.com/a.png', caption: 'a' }];
    expect(
      (
        await post('/trace_log', {
          trace_id,
          project_name: 'empty',
          scores: [{ name: 'acc', score: 0.5 }],
          images,
          annotations,
        })
      ).statusCode,
    ).toBe(200);
    expect(await asClient('GET', `/trace_log/${trace_id}`)).toMatchObject({
      scores: [{ name: 'acc', score: 0.5 }],
      images,
      annotations,
    });
  });
});

describe('trees', () => {
  it('without x-sdk-language: api.md’s shape, spans nested in children, ids in children_ids', async () => {
    const { root, child, grandchild } = await writeTree('dialects');
    const tree = (await readTrace(stack.app, key, root)).json();
    expect(tree).not.toHaveProperty('children_logs');
    expect(tree.children_ids).toEqual([child]);
    expect(tree.children[0]).toMatchObject({ trace_id: child, children_ids: [grandchild] });
    expect(tree.children[0].children[0]).toMatchObject({ trace_id: grandchild, children_ids: [], children: [] });
  });

  it('with x-sdk-language: the clients’ dialect on every tree route, each span once', async () => {
    const { root, child, grandchild } = await writeTree('client-dialect', { experiment_uuid: null });
    const check = (tree: any) => {
      expect(tree).toMatchObject({ trace_id: root, children: [child] });
      expect(tree.children_logs[0]).toMatchObject({ trace_id: child, children: [grandchild], depth: 1 });
      expect(tree.children_logs[0].children_logs[0]).toMatchObject({
        trace_id: grandchild,
        children: [],
        children_logs: [],
        depth: 2,
      });
      expect(JSON.stringify(tree).split('"trace_id"').length - 1).toBe(3);
      for (const dialectKey of ['children_ids', 'experiment_uuid', 'output'])
        expect(tree).not.toHaveProperty(dialectKey);
    };
    check(await asClient('GET', `/trace_log/${root}`));
    // The answer depends on the header, and says so to caches.
    expect((await readTrace(stack.app, key, root)).headers.vary).toContain('x-sdk-language');
    check((await asClient('POST', '/get_trace_logs', { project_name: 'client-dialect' })).results[0]);

    const project = (await asClient('POST', '/project', { name: 'client-dialect' })).uuid;
    const experiment = (await asClient('POST', '/experiment', { name: 'e', project_uuid: project })).uuid;
    const ids = await writeTree('client-dialect', { experiment_uuid: experiment });
    const [listed] = await asClient('POST', `/experiment/${experiment}/trace_logs`, {});
    expect(listed).toMatchObject({ trace_id: ids.root, children: [ids.child] });
    expect(listed.children_logs[0].children_logs[0].trace_id).toBe(ids.grandchild);
  });

  it('are described in both dialects by the OpenAPI document, on every tree route', async () => {
    const doc = (await stack.app.inject({ url: '/openapi.json' })).json();
    const shapes = (path: string) => {
      const [operation] = Object.values(doc.paths[`/api/svc/v1${path}`]) as any[];
      const schema = operation.responses['200'].content['application/json'].schema;
      const tree = (s: any) => (s.type === 'array' ? s.items : s.properties?.results ? s.properties.results.items : s);
      return schema.anyOf.map((s: any) =>
        Object.keys(tree(s).properties)
          .filter((k) => k.startsWith('children'))
          .sort(),
      );
    };
    for (const path of ['/trace_log/{trace_id}', '/get_trace_logs', '/experiment/{experiment_uuid}/trace_logs']) {
      expect(shapes(path), path).toEqual([
        ['children', 'children_ids'],
        ['children', 'children_logs'],
      ]);
    }
  });

  it('give every span a start and leave unknown depths out for the clients, so the Python client can read them', async () => {
    const [root, orphan] = [randomUUID(), randomUUID()];
    // A child whose root never arrived: the tree cannot place it, so its depth and order are unknown.
    expect(
      (
        await post('/trace_log', {
          trace_id: orphan,
          root_trace_id: root,
          parent_trace_id: root,
          project_name: 'orphans',
        })
      ).statusCode,
    ).toBe(200);
    const api = (await readTrace(stack.app, key, orphan)).json();
    expect(api).toMatchObject({
      depth: null,
      execution_order: null,
      start_timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
    const [{ created_at }] =
      await sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as created_at from spans where trace_id = ${orphan}`;
    expect(api.start_timestamp).toBe(created_at);
    const client = await asClient('GET', `/trace_log/${orphan}`);
    expect(client).not.toHaveProperty('depth');
    expect(client).not.toHaveProperty('execution_order');
  });
});
