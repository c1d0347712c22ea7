import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { Agent, fetch } from 'undici';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { agentTrace, manyTraces } from '../support/console-data';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ orgs: ['export', 'export-other'] });

type Tree = Record<string, unknown> & { trace_id: string; children: Tree[] };
const project = `export-${randomUUID()}`;
const NOW = Date.now();
const roots: string[] = [];

/** Spans written through the batch route, once the listing shows every root. */
async function write(spans: (Record<string, unknown> & { trace_id: string })[], key = org.key) {
  for (let i = 0; i < spans.length; i += 1000) {
    const res = await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans.slice(i, i + 1000) });
    expect(res.statusCode, res.body).toBe(200);
  }
}

async function listed(body: Record<string, unknown> = {}, key = org.key): Promise<string[]> {
  const res = await call(stack.app, key, 'POST', '/traces', { project_name: project, page_size: 100, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().results as { trace_id: string }[]).map((r) => r.trace_id);
}

function exported(body: Record<string, unknown>, key = org.key) {
  return call(stack.app, key, 'POST', '/traces/export', { project_name: project, ...body });
}

const lines = (text: string) => text.split('\n').filter(Boolean);

beforeAll(async () => {
  const agents = [0, 1, 2].map((i) => agentTrace(project, NOW - 3_600_000 - i * 60_000, `agent-${i}`));
  const flat = manyTraces(project, 20, NOW - 7_200_000);
  // A name a spreadsheet would run.
  flat[0]!.trace_name = '=HYPERLINK("http://evil.example","x")';
  // Texts of several bytes a character, quotes and line breaks: each file holds them as the JSON does.
  Object.assign(flat[1]!, { output: 'naïve "quoted"\nline — 日本 🙂', inputs: { q: 'ünïcode 🙂 "x"' }, tags: ['é'] });
  // Texts a spreadsheet would run, in other fields and by every character that starts a formula.
  Object.assign(flat[2]!, {
    output: '+1 then -2',
    session_id: '@session',
    end_user_identifier: '\tuser',
    tags: ['=tag'],
  });
  Object.assign(flat[3]!, { output: '-x', end_user_identifier: '\r=1+1', session_id: 'a=b' });
  await write([...agents.flatMap((a) => a.spans), ...flat]);
  // The same project name in another organization: never in this one's export.
  await write(manyTraces(project, 2, NOW), other.key);
  for (let i = 0; (await listed()).length < 23; i++) {
    if (i === 200) throw new Error('the traces were not written in 20 s');
    await sleep(100);
  }
  roots.push(...(await listed()));
});

describe('POST /traces/export', () => {
  it('JSONL traces: a line per trace, in the listing’s order, each exactly as GET /trace_log reads it', async () => {
    const res = await exported({ format: 'jsonl' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.headers['content-disposition']).toMatch(/attachment; filename=".*-traces-\d{4}-\d\d-\d\d\.jsonl"/);
    const traces = lines(res.body).map((l) => JSON.parse(l) as Tree);
    expect(traces.map((t) => t.trace_id)).toEqual(roots);
    for (const trace of traces.slice(0, 4))
      expect(trace).toEqual((await readTrace(stack.app, org.key, trace.trace_id)).json());
  });

  it('JSONL spans: every span once, trace after trace, a parent before its children', async () => {
    const res = await exported({ format: 'jsonl', shape: 'spans' });
    const spans = lines(res.body).map((l) => JSON.parse(l) as Tree);
    const [{ n }] =
      await sql`select count(*)::int as n from spans where organization_id = ${org.id} and created and project_id = (select id from projects where organization_id = ${org.id} and name = ${project})`;
    expect(spans).toHaveLength(n);
    expect(new Set(spans.map((s) => s.trace_id)).size).toBe(n);
    expect([...new Set(spans.map((s) => s.root_trace_id))]).toEqual(roots);
    const seen = new Set<unknown>();
    for (const span of spans) {
      if (span.parent_trace_id !== span.trace_id) expect(seen).toContain(span.parent_trace_id);
      seen.add(span.trace_id);
      expect(span).not.toHaveProperty('children');
    }
  });

  it('takes the table’s filters, sort and search: the same traces in the same order', async () => {
    const cases = [
      { filters: [{ field: 'trace_name', operator: 'equals', value: 'classify-intent' }] },
      { status: 'error', sort: 'slowest' },
      { sort: 'costliest' },
    ];
    for (const body of cases) {
      const res = await exported({ format: 'jsonl', ...body });
      expect(
        lines(res.body).map((l) => JSON.parse(l).trace_id),
        JSON.stringify(body),
      ).toEqual(await listed(body));
    }
  });

  it('CSV spans: a column per field, JSON fields as JSON, formulas escaped', async () => {
    const res = await exported({ format: 'csv', shape: 'spans' });
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const rows = parse(res.body, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(
      expect.arrayContaining([
        'trace_id',
        'root_trace_id',
        'parent_trace_id',
        'inputs',
        'metadata',
        'latency',
        'cache_hit',
      ]),
    );
    expect(rows.map((r) => r.trace_name)).toContain(`'=HYPERLINK("http://evil.example","x")`);
    const agent = rows.find((r) => r.trace_name === 'agent-0')!;
    expect(JSON.parse(agent.metadata!)).toEqual({ environment: 'production', release: '2026.11.3' });
    expect(JSON.parse(agent.tags!)).toEqual(['prod', 'agent']);
    expect(Number(agent.latency)).toBeCloseTo(2.4, 3);
  });

  it('CSV holds every field of every span as the JSONL does: text as text, numbers, JSON, null as nothing', async () => {
    const json = lines((await exported({ format: 'jsonl', shape: 'spans' })).body).map((l) => JSON.parse(l) as Tree);
    const rows = parse((await exported({ format: 'csv', shape: 'spans' })).body, { columns: true }) as Record<
      string,
      string
    >[];
    expect(rows.map((r) => r.trace_id)).toEqual(json.map((s) => s.trace_id));
    for (const [i, span] of json.entries()) {
      expect(Object.keys(rows[i]!)).toEqual(Object.keys(span));
      for (const [field, value] of Object.entries(span)) {
        const cell = rows[i]![field]!;
        const where = `${span.trace_id} ${field}`;
        if (value === null) expect(cell, where).toBe('');
        else if (typeof value === 'object') expect(JSON.parse(cell), where).toEqual(value);
        else if (typeof value === 'string') expect(cell, where).toBe(/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
        else if (typeof value === 'number') expect(Number(cell), where).toBe(value);
        else expect(cell, where).toBe(String(value));
      }
    }
  });

  it('CSV traces: the root’s fields, then its spans nested in `children`', async () => {
    const rows = parse((await exported({ format: 'csv' })).body, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.trace_id)).toEqual(roots);
    const agent = rows.find((r) => r.trace_name === 'agent-1')!;
    const tree = (await readTrace(stack.app, org.key, agent.trace_id!)).json() as Tree;
    expect(JSON.parse(agent.children!)).toEqual(tree.children);
    expect(agent.output).toBe(tree.output);
  });

  it('Parquet: typed columns, and a trace’s spans nested in `children`', async () => {
    const res = await exported({ format: 'parquet' });
    expect(res.statusCode).toBe(200);
    const file = new Uint8Array(res.rawPayload).buffer;
    const types = Object.fromEntries(
      parquetMetadata(file)
        .schema.slice(1)
        .map((c) => [c.name, [c.type, c.converted_type]]),
    );
    expect(types).toMatchObject({
      trace_id: ['BYTE_ARRAY', 'UTF8'],
      start_timestamp: ['INT64', 'TIMESTAMP_MILLIS'],
      latency: ['DOUBLE', undefined],
      input_tokens: ['INT32', undefined],
      cache_hit: ['BOOLEAN', undefined],
      children: ['BYTE_ARRAY', 'UTF8'],
    });
    const rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
    expect(rows.map((r) => r.trace_id)).toEqual(roots);
    // Readers skip row groups by time and by numbers: those columns carry their group's bounds; texts carry none.
    let first = 0;
    for (const group of parquetMetadata(file).row_groups) {
      const chunk = (name: string) => group.columns.find((c) => c.meta_data!.path_in_schema[0] === name)!.meta_data!;
      const starts = rows
        .slice(first, (first += Number(group.num_rows)))
        .map((r) => (r.start_timestamp as Date).getTime());
      expect(chunk('start_timestamp').statistics).toMatchObject({
        min_value: new Date(Math.min(...starts)),
        max_value: new Date(Math.max(...starts)),
      });
      expect(chunk('trace_id').statistics).toBeUndefined();
    }
    expect(first).toBe(rows.length);
    const agent = rows.find((r) => r.trace_name === 'agent-0')!;
    const tree = (await readTrace(stack.app, org.key, agent.trace_id as string)).json() as Tree;
    expect(JSON.parse(agent.children as string)).toEqual(tree.children);
    expect(agent.start_timestamp).toEqual(new Date(`${(tree.start_timestamp as string).replace(' ', 'T')}Z`));
    expect(JSON.parse(agent.inputs as string)).toEqual(tree.inputs);
  });

  it('Parquet spans hold every field of every span as the JSONL does, each in its type', async () => {
    const json = lines((await exported({ format: 'jsonl', shape: 'spans' })).body).map((l) => JSON.parse(l) as Tree);
    const file = new Uint8Array((await exported({ format: 'parquet', shape: 'spans' })).rawPayload).buffer;
    const rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
    expect(rows.map((r) => r.trace_id)).toEqual(json.map((s) => s.trace_id));
    for (const [i, span] of json.entries()) {
      expect(Object.keys(rows[i]!)).toEqual(Object.keys(span));
      for (const [field, value] of Object.entries(span)) {
        const cell = rows[i]![field];
        const where = `${span.trace_id} ${field}`;
        if (value === null) expect(cell, where).toBeNull();
        else if (typeof value === 'object') expect(JSON.parse(cell as string), where).toEqual(value);
        else if (field.endsWith('_timestamp'))
          expect(cell, where).toEqual(new Date(`${(value as string).replace(' ', 'T')}Z`));
        else expect(cell, where).toEqual(value);
      }
    }
  });

  it('says how far it is under its export_id, to any caller of the organization only', async () => {
    const exportId = randomUUID();
    expect((await exported({ format: 'csv', export_id: exportId })).statusCode).toBe(200);
    const progress = await call(stack.app, org.key, 'GET', `/traces/export/${exportId}`);
    const spans = lines((await exported({ format: 'jsonl', shape: 'spans' })).body).length;
    expect(progress.json()).toEqual({ traces: 23, spans, state: 'done' });
    expect((await call(stack.app, other.key, 'GET', `/traces/export/${exportId}`)).statusCode).toBe(404);
  });

  it('refuses a bad filter with 422 before any byte, and answers an empty file for an unknown project', async () => {
    const bad = await exported({ format: 'jsonl', filters: [{ field: 'nope', operator: 'equals', value: 'x' }] });
    expect(bad.statusCode).toBe(422);
    const none = await call(stack.app, org.key, 'POST', '/traces/export', {
      project_name: `none-${randomUUID()}`,
      format: 'csv',
    });
    expect(none.statusCode).toBe(200);
    expect(lines(none.body)).toEqual([expect.stringMatching(/^trace_id,root_trace_id,parent_trace_id,/)]);
  });

  it('stops reading when the caller goes away: the export is cancelled and its connection given back', async () => {
    // Enough traces that the file is far from written when the caller leaves.
    await write(manyTraces(project, 2000, NOW - 86_400_000).map((s) => ({ ...s, inputs: { text: 'x'.repeat(2000) } })));
    await expect
      .poll(
        async () => (await call(stack.app, org.key, 'POST', '/traces/count', { project_name: project })).json().total,
        { timeout: 30_000 },
      )
      .toBe(2023);
    await stack.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(stack.app.server.address() as AddressInfo).port}/api/svc/v1`;
    const exportId = randomUUID();
    const abort = new AbortController();
    const client = new Agent();
    const res = await fetch(`${base}/traces/export`, {
      dispatcher: client,
      method: 'POST',
      headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
      body: JSON.stringify({ project_name: project, format: 'jsonl', export_id: exportId }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    await client.destroy();
    await expect
      .poll(async () => (await call(stack.app, org.key, 'GET', `/traces/export/${exportId}`)).json().state, {
        timeout: 10_000,
      })
      .toBe('cancelled');
    const { spans } = (await call(stack.app, org.key, 'GET', `/traces/export/${exportId}`)).json();
    expect(spans).toBeLessThan(2023 + 9);
    // Its cursor's transaction ended: no session of this database is left in it.
    await sleep(200);
    const open =
      await sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%' and query like 'select s.trace_id from %'`;
    expect(open[0]!.n).toBe(0);
  });
});
