import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { openLive } from '../support/live';
import { useStack } from '../support/fixtures';

// The trace page's search within a trace, and the API's compressed answers (a big trace's skeleton).
const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ worker: false, orgs: ['trace-search', 'trace-search-other'] });

type Written = {
  trace_id: string;
  parent?: string;
  name: string;
  inputs?: unknown;
  output?: string;
  metadata?: unknown;
  status?: string;
};

/** Spans of one trace, the first its root, written as the worker stores them. */
async function writeTrace(orgId: string, spans: Written[]) {
  const root = spans[0]!.trace_id;
  const rows = spans.map((s, i) => ({
    organization_id: orgId,
    trace_id: s.trace_id,
    root_trace_id: root,
    parent_trace_id: s.parent ?? root,
    created: true,
    depth: i ? 1 : 0,
    execution_order: i,
    trace_name: s.name,
    inputs: s.inputs === undefined ? null : sql.json(s.inputs as never),
    output: s.output ?? null,
    metadata: s.metadata === undefined ? null : sql.json(s.metadata as never),
    status: s.status ?? 'success',
  }));
  await sql`insert into spans ${sql(rows)}`;
}

const search = (key: string, traceId: string, text: string) =>
  call(stack.app, key, 'GET', `/trace/${traceId}/search?text=${encodeURIComponent(text)}`);

describe('GET /trace/{id}/search: the spans of a trace that contain a text', () => {
  const [root, retrieve, llm, tool, plain] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    const spans: Written[] = [
      { trace_id: root, name: 'agent-run', inputs: { question: 'Discount of 100% for order A_1?' } },
      { trace_id: retrieve, name: 'search-docs', metadata: { index: 'docs-v7', note: 'He said "refund"\nthen left' } },
      { trace_id: llm, name: 'llm-call', output: 'A discount of 1000 euros for order AB1.', status: 'error' },
      { trace_id: tool, parent: llm, name: 'Refund-Tool', output: 'done' },
      { trace_id: plain, name: 'wrap-up', output: 'nothing to see' },
    ];
    await writeTrace(org.id, spans);
    // Another organization's trace under the same ids, holding the same words.
    await writeTrace(other.id, spans);
    await sql`update spans set trace_name = 'theirs-' || trace_name where organization_id = ${other.id}`;
  });

  const ids = async (text: string, key = org.key, traceId = llm) => {
    const res = await search(key, traceId, text);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().trace_ids as string[];
  };

  it('finds spans by name, inputs, output and metadata, in any case, from any span of the trace', async () => {
    expect(await ids('refund')).toEqual([retrieve, tool]);
    expect(await ids('AGENT')).toEqual([root]);
    expect(await ids('question', org.key, tool)).toEqual([root]);
    expect(await ids('1000 euros')).toEqual([llm]);
    expect(await ids('docs-v7')).toEqual([retrieve]);
    expect(await ids('no such words')).toEqual([]);
  });

  it('matches the text as written: % and _ are themselves, not wildcards', async () => {
    expect(await ids('100%')).toEqual([root]);
    expect(await ids('A_1')).toEqual([root]);
    expect(await ids('%')).toEqual([root]);
    expect(await ids('_')).toEqual([root]);
    expect(await ids('\\')).toEqual([]);
  });

  it('finds text that JSON escapes (quotes, line breaks) inside inputs and metadata', async () => {
    expect(await ids('said "refund"\nthen')).toEqual([retrieve]);
  });

  it("answers only the caller's organization's spans, and 404 for another's trace", async () => {
    expect(await ids('theirs', org.key)).toEqual([]);
    expect(await ids('theirs', other.key)).toEqual([root, retrieve, llm, tool, plain]);
    expect((await search(org.key, randomUUID(), 'refund')).statusCode).toBe(404);
    const theirsOnly = randomUUID();
    await writeTrace(other.id, [{ trace_id: theirsOnly, name: 'refund' }]);
    const res = await search(org.key, theirsOnly, 'refund');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: expect.stringMatching(/not found/) });
  });

  it('refuses a missing, empty or too long text and a bad id with 422 in the validation shape', async () => {
    const missing = await call(stack.app, org.key, 'GET', `/trace/${llm}/search`);
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ loc: ['query', 'text'] });
    for (const text of ['', 'x'.repeat(501)]) {
      const res = await search(org.key, llm, text);
      expect(res.statusCode, text).toBe(422);
      expect(res.json().detail[0]).toMatchObject({ loc: ['query', 'text'], msg: expect.any(String) });
    }
    const badId = await search(org.key, 'not-a-uuid', 'refund');
    expect(badId.statusCode).toBe(422);
    expect(badId.json().detail[0]).toMatchObject({ loc: ['path', 'trace_id'] });
  });

  it('is in the OpenAPI document with its query and answer', async () => {
    const doc = (await stack.app.inject({ url: '/openapi.json' })).json();
    const op = doc.paths['/api/svc/v1/trace/{trace_id}/search'].get;
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual([
      'path:trace_id',
      'query:text',
    ]);
    expect(op.responses['200'].content['application/json'].schema.properties).toHaveProperty('trace_ids');
    expect(op.responses).toHaveProperty('422');
  });
});

describe('compressed answers', () => {
  const root = randomUUID();
  const SPANS = 2000;

  beforeAll(async () => {
    const ids = [root, ...Array.from({ length: SPANS - 1 }, () => randomUUID())];
    await writeTrace(
      org.id,
      ids.map((id, i) => ({ trace_id: id, parent: i ? ids[Math.floor((i - 1) / 4)] : undefined, name: `step-${i}` })),
    );
  });

  const skeleton = (encoding?: string) =>
    stack.app.inject({
      url: `/api/svc/v1/trace/${root}/skeleton`,
      headers: { 'x-api-key': org.key, ...(encoding && { 'accept-encoding': encoding }) },
    });

  it("sends a big trace's skeleton in brotli or gzip when the client accepts it, and plain when not", async () => {
    const plain = await skeleton();
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const json = plain.json();
    expect(json.spans).toHaveLength(SPANS);

    const br = await skeleton('gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(json);

    // Compressed whole, it says its length, so that a client can show its progress.
    expect(br.headers['content-length']).toBe(String(br.rawPayload.length));

    const gzip = await skeleton('br;q=0, gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['content-length']).toBe(String(gzip.rawPayload.length));
    expect(JSON.parse(gunzipSync(gzip.rawPayload).toString())).toEqual(json);

    const identity = await skeleton('identity');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.json()).toEqual(json);
  });

  it('leaves an answer under 1 KB plain', async () => {
    const res = await search(org.key, root, 'step-1999');
    expect(res.json().trace_ids).toHaveLength(1);
    const asked = await stack.app.inject({
      url: `/api/svc/v1/trace/${root}/search?text=step-1999`,
      headers: { 'x-api-key': org.key, 'accept-encoding': 'br, gzip' },
    });
    expect(asked.statusCode).toBe(200);
    expect(asked.headers['content-encoding']).toBeUndefined();
  });

  it('never compresses the live tail, even when asked: its events arrive as they are sent', async () => {
    const base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
    const project = (await call(stack.app, org.key, 'POST', '/project', { name: 'compressed' })).json().uuid;
    const res = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${project}`, {
      headers: { 'x-api-key': org.key, 'accept-encoding': 'br, gzip' },
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(res.headers.get('content-encoding')).toBeNull();
    await res.body?.cancel();
    // The tail as the console opens it (fetch asks for br and gzip by default) says it is ready.
    const live = await openLive(base, org.key, project);
    await live.close();
  });
});
