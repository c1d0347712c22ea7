import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';
import {
  decodeExportResponse,
  otlpJson,
  otlpProtobuf,
  postOtlp,
  spanIdHex,
  traceIdHex,
  type SpanSpec,
  uuidOfHex as uuid,
} from '../support/otlp';

const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ orgs: ['otel', 'otel-other'] });

const spanUuid = (traceId: string, spanId: string) => uuid(traceId.slice(0, 16) + spanId);

type Tree = { trace_id: string; trace_name: string; depth: number; children: Tree[]; [k: string]: unknown };
const names = (t: Tree): unknown => ({ name: t.trace_name, depth: t.depth, children: t.children.map(names) });
/** Each span's name and execution order, depth first. */
const orders = (t: Tree): [string, unknown][] => [[t.trace_name, t.execution_order], ...t.children.flatMap(orders)];
/** The store's order (the root, then by start): whether the API placed the spans or the store did. */
const AGENT_ORDER = [
  ['agent', 0],
  ['chat gpt-4o-mini', 1],
  ['execute_tool weather', 2],
  ['chat inner', 3],
];

/** A small agent trace: root → llm, root → tool → llm. */
const AGENT_TREE = {
  name: 'agent',
  depth: 0,
  children: [
    { name: 'chat gpt-4o-mini', depth: 1, children: [] },
    { name: 'execute_tool weather', depth: 1, children: [{ name: 'chat inner', depth: 2, children: [] }] },
  ],
};

function agentTrace() {
  const traceId = traceIdHex();
  const [root, llm, tool, inner] = [spanIdHex(), spanIdHex(), spanIdHex(), spanIdHex()];
  const at = (ms: number) => 1_767_225_600_000_000_000n + BigInt(ms) * 1_000_000n;
  const spans: SpanSpec[] = [
    {
      traceId,
      spanId: root,
      name: 'agent',
      start: at(0),
      end: at(900),
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
    },
    {
      traceId,
      spanId: llm,
      parentSpanId: root,
      name: 'chat gpt-4o-mini',
      start: at(10),
      end: at(300),
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 300,
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'weather in Paris?' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Paris' } }],
          },
        ]),
      },
    },
    {
      traceId,
      spanId: tool,
      parentSpanId: root,
      name: 'execute_tool weather',
      start: at(310),
      end: at(400),
      attributes: { 'gen_ai.operation.name': 'execute_tool' },
    },
    {
      traceId,
      spanId: inner,
      parentSpanId: tool,
      name: 'chat inner',
      start: at(320),
      end: at(390),
      attributes: {
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
      },
    },
  ];
  return { traceId, spans, ids: { root, llm, tool, inner } };
}

describe('POST /v1/traces', () => {
  it('stores a trace sent as OTLP/JSON as one tree, its root the trace id, read back like any trace', async () => {
    const { traceId, spans, ids } = agentTrace();
    const project = `otel-json-${randomUUID()}`;
    const res = await postOtlp(stack.app, org.key, otlpJson(spans, { 'service.name': project }));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({});

    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(names(tree)).toEqual(AGENT_TREE);
    expect(orders(tree)).toEqual(AGENT_ORDER);
    expect(tree.project_name).toBe(project);
    const llm = tree.children[0];
    expect(llm.trace_id).toBe(spanUuid(traceId, ids.llm));
    expect(llm.configuration).toMatchObject({
      model: 'gpt-4o-mini',
      provider: 'openai',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    });
    expect(JSON.parse(llm.output as string)).toEqual([{ name: 'weather', arguments: '{"city":"Paris"}' }]);
    expect(llm).toMatchObject({ input_tokens: 1200, output_tokens: 300, total_tokens: 1500, status: 'success' });
    expect(llm.cost).toBeGreaterThan(0);
    expect(llm.metadata).toMatchObject({ kind: 'llm' });
    expect(llm.metadata).not.toHaveProperty('otel.scope.name');
    expect(tree.metadata).toMatchObject({
      'otel.span_id': ids.root,
      'otel.scope.name': 'sightline-test',
      'resource.service.name': project,
    });
    expect(llm.latency).toBeCloseTo(0.29, 6);

    // The console's trace view shows each span's kind, as the conventions named it.
    const skeleton = (await call(stack.app, org.key, 'GET', `/trace/${uuid(traceId)}/skeleton`)).json();
    expect(skeleton.spans.map((sp: { trace_name: string; kind: string }) => [sp.trace_name, sp.kind])).toEqual([
      ['agent', 'agent'],
      ['chat gpt-4o-mini', 'llm'],
      ['execute_tool weather', 'tool'],
      ['chat inner', 'llm'],
    ]);

    const listing = (await call(stack.app, org.key, 'POST', '/get_trace_logs', { project_name: project })).json();
    expect(listing.total).toBe(1);
    expect(listing.results[0]).toMatchObject({ trace_id: uuid(traceId), trace_name: 'agent' });
    expect(listing.results[0].children.map((c: Tree) => c.trace_name)).toEqual([
      'chat gpt-4o-mini',
      'execute_tool weather',
    ]);
  });

  it('takes protobuf, gzip, and the key as a Bearer token, answering in protobuf', async () => {
    const { traceId, spans } = agentTrace();
    const project = `otel-proto-${randomUUID()}`;
    const res = await postOtlp(stack.app, org.key, otlpProtobuf(otlpJson(spans, { 'service.name': project })), {
      encoding: 'protobuf',
      gzip: true,
      path: '/api/svc/v1/otel/v1/traces',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect(decodeExportResponse(res.rawPayload).partialSuccess).toBeUndefined();
    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(tree.children).toHaveLength(2);
    expect(tree.project_name).toBe(project);
  });

  it.each([
    ['children first, the root last', [[3], [1, 2], [0]]],
    ['the root first', [[0], [1, 2], [3]]],
    ['a grandchild before its parent, the root between', [[3], [0], [1, 2]]],
  ])('a trace exported in three requests (%s) comes back as one tree, each span stored once', async (_, order) => {
    const { traceId, spans } = agentTrace();
    const project = `otel-order-${randomUUID()}`;
    const stored = () =>
      sql`select count(*)::int as n from spans where organization_id = ${org.id} and root_trace_id = ${uuid(traceId)} and created`.then(
        ([{ n }]) => n as number,
      );
    let sent = 0;
    for (const part of order) {
      const res = await postOtlp(
        stack.app,
        org.key,
        otlpJson(
          part.map((i) => spans[i]),
          { 'service.name': project },
        ),
      );
      expect(res.statusCode).toBe(200);
      sent += part.length;
      // Each request written before the next is sent: they meet in separate transactions.
      await expect.poll(stored, { timeout: 10_000 }).toBe(sent);
    }
    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(names(tree)).toEqual(AGENT_TREE);
    expect(orders(tree)).toEqual(AGENT_ORDER);
    // Exported again, nothing is stored twice.
    expect((await postOtlp(stack.app, org.key, otlpJson(spans, { 'service.name': project }))).statusCode).toBe(200);
    expect(names((await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree)).toEqual(names(tree));
    expect(await stored()).toBe(4);
  });

  it('a span arriving after its trace was placed whole moves the others: the API’s places never override the tree', async () => {
    const { traceId, spans, ids } = agentTrace();
    expect((await postOtlp(stack.app, org.key, otlpJson(spans))).statusCode).toBe(200);
    expect(orders((await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree)).toEqual(AGENT_ORDER);
    const early = {
      traceId,
      spanId: spanIdHex(),
      parentSpanId: ids.root,
      name: 'early',
      start: 1_767_225_600_005_000_000n,
    };
    expect((await postOtlp(stack.app, org.key, otlpJson([early]))).statusCode).toBe(200);
    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(orders(tree)).toEqual([
      ['agent', 0],
      ['early', 1],
      ['chat gpt-4o-mini', 2],
      ['execute_tool weather', 3],
      ['chat inner', 4],
    ]);
  });

  it('takes the project from x-project-name, else the resource attributes in order, else "default"', async () => {
    const header = `otel-header-${randomUUID()}`,
      named = `otel-named-${randomUUID()}`,
      phoenix = `otel-phoenix-${randomUUID()}`;
    const cases: [Record<string, string>, Record<string, string>, string][] = [
      [{ 'x-project-name': header }, { 'service.name': 'ignored' }, header],
      [{}, { 'sightline.project.name': named, 'openinference.project.name': 'no', 'service.name': 'no' }, named],
      [{}, { 'openinference.project.name': phoenix, 'service.name': 'no' }, phoenix],
      [{}, { 'service.name': 'unknown_service:node' }, 'default'],
    ];
    for (const [headers, resource, project] of cases) {
      const traceId = traceIdHex();
      const res = await postOtlp(
        stack.app,
        org.key,
        otlpJson([{ traceId, spanId: spanIdHex(), name: 'p' }], resource),
        {
          headers,
        },
      );
      expect(res.statusCode).toBe(200);
      expect((await readTrace(stack.app, org.key, uuid(traceId))).json().project_name).toBe(project);
    }
  });

  it('keeps each organization’s spans its own: the same OTel ids from two organizations are two traces', async () => {
    const { traceId, spans } = agentTrace();
    expect((await postOtlp(stack.app, org.key, otlpJson(spans))).statusCode).toBe(200);
    expect((await postOtlp(stack.app, other.key, otlpJson(spans.slice(0, 1)))).statusCode).toBe(200);
    expect(((await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree).children).toHaveLength(2);
    expect(((await readTrace(stack.app, other.key, uuid(traceId))).json() as Tree).children).toHaveLength(0);
  });

  it('refuses requests without a valid key, and viewers', async () => {
    const body = otlpJson([{ traceId: traceIdHex(), spanId: spanIdHex(), name: 'x' }]);
    const none = await postOtlp(stack.app, org.key, body, { key: null });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ code: 16, message: expect.stringMatching(/Bearer/) });
    expect((await postOtlp(stack.app, org.key, body, { key: 'sl-not-a-key' })).statusCode).toBe(401);
    const viewer = await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'otel-viewer' });
    expect((await postOtlp(stack.app, org.key, body, { key: viewer.json().key })).statusCode).toBe(403);
  });
});

describe('POST /v1/traces with bad input: 4xx or partial success, never 5xx, nothing else in the batch lost', () => {
  /** Posts `bad` beside a good trace in one request; answers the response and whether the good trace was stored. */
  async function beside(bad: (traceId: string) => SpanSpec[]) {
    const good = agentTrace();
    const traceId = traceIdHex();
    const res = await postOtlp(stack.app, org.key, otlpJson([...good.spans, ...bad(traceId)]));
    const stored = (await readTrace(stack.app, org.key, uuid(good.traceId))).json() as Tree;
    return { res, storedChildren: stored.children.length, traceId };
  }

  it('a span with a 3-byte id is rejected alone, reported through partial_success', async () => {
    const { res, storedChildren } = await beside((traceId) => [{ traceId, spanId: 'abcdef', name: 'bad id' }]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      partialSuccess: { rejectedSpans: '1', errorMessage: expect.stringContaining('spanId must be 8 bytes') },
    });
    expect(storedChildren).toBe(2);
  });

  it('a 10 MB attribute is kept cut (saying so), and 10,000 attributes are kept bounded', async () => {
    const huge = 'y'.repeat(10 * 1024 * 1024);
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`a.${i}`, i]));
    const { res, storedChildren, traceId } = await beside((t) => [
      { traceId: t, spanId: spanIdHex(), name: 'huge', attributes: { 'input.value': huge } },
      { traceId: traceIdHex(), spanId: spanIdHex(), name: 'many', attributes: many },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({});
    expect(storedChildren).toBe(2);
    const tree = await readTrace(stack.app, org.key, uuid(traceId));
    const input = (tree.json() as Tree).inputs as { input: string };
    expect(input.input).toMatch(/… \[truncated: 10485760 characters\]$/);
  });

  it('a truncated protobuf body answers 400 with a Status in protobuf; nothing of it is stored', async () => {
    const { traceId, spans } = agentTrace();
    const bytes = otlpProtobuf(otlpJson(spans));
    const res = await postOtlp(stack.app, org.key, bytes.subarray(0, bytes.length - 7), { encoding: 'protobuf' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect((await call(stack.app, org.key, 'GET', `/trace_log/${uuid(traceId)}`)).statusCode).toBe(404);
  });

  it('refuses a wrong content type (415), a bad gzip body and JSON that is not JSON or nests too deep (400)', async () => {
    const body = otlpJson([{ traceId: traceIdHex(), spanId: spanIdHex(), name: 'x' }]);
    const text = await postOtlp(stack.app, org.key, JSON.stringify(body), {
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.statusCode).toBe(415);
    const badGzip = await postOtlp(stack.app, org.key, 'not gzip', { headers: { 'content-encoding': 'gzip' } });
    expect(badGzip.statusCode).toBe(400);
    expect(badGzip.json().message).toMatch(/gzip/);
    const notJson = await postOtlp(stack.app, org.key, '{"resourceSpans": [', {});
    expect(notJson.statusCode).toBe(400);
    const deep = await postOtlp(stack.app, org.key, `{"resourceSpans":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(deep.statusCode).toBe(400);
    const notOtlp = await postOtlp(stack.app, org.key, { resourceSpans: 'x' });
    expect(notOtlp.statusCode).toBe(400);
    expect(notOtlp.json()).toEqual({ code: 3, message: expect.stringMatching(/resourceSpans must be an array/) });
  });
});
