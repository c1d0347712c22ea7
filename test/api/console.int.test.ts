import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { rootListingSql, searchWordsOf } from '@sightline/db';
import { call, readTrace } from '../support/app';
import { openLive as openLiveAt } from '../support/live';
import { testRedis } from '../support/services';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ orgs: ['console', 'console-other'] });
let base: string;
beforeAll(async () => {
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** A root with a child and a grandchild (an LLM call with cost and tokens); answers the ids. */
async function writeTrace(
  key: string,
  project: string,
  opts: { name: string; words: string; status?: string; startedAgo: number },
) {
  const [root, child, llm] = [randomUUID(), randomUUID(), randomUUID()];
  const spans = [
    {
      trace_id: root,
      project_name: project,
      trace_name: opts.name,
      inputs: { question: 'q' },
      output: 'done',
      status: opts.status ?? 'success',
      start_timestamp: ago(opts.startedAgo),
      end_timestamp: ago(opts.startedAgo - 2),
    },
    {
      trace_id: child,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: project,
      trace_name: 'retrieve',
      metadata: { run_type: 'retriever', note: opts.words },
      start_timestamp: ago(opts.startedAgo),
      end_timestamp: ago(opts.startedAgo - 1),
    },
    {
      trace_id: llm,
      root_trace_id: root,
      parent_trace_id: child,
      project_name: project,
      trace_name: 'answer',
      cost: 0.25,
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [{ role: 'user', content: 'hi' }] },
      start_timestamp: ago(opts.startedAgo - 1),
      end_timestamp: ago(opts.startedAgo - 2),
    },
  ];
  const res = await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans });
  expect(res.statusCode, res.body).toBe(200);
  expect((await readTrace(stack.app, key, root)).statusCode).toBe(200);
  return { root, child, llm };
}

describe('the console reads', () => {
  let first: { root: string; child: string; llm: string };
  let second: { root: string; child: string; llm: string };
  let projectUuid: string;

  beforeAll(async () => {
    first = await writeTrace(org.key, 'shop', { name: 'checkout', words: 'velvet umbrella', startedAgo: 600 });
    second = await writeTrace(org.key, 'shop', {
      name: 'refund',
      words: 'granite kettle',
      status: 'error',
      startedAgo: 300,
    });
    await writeTrace(other.key, 'shop', { name: 'theirs', words: 'velvet umbrella', startedAgo: 100 });
    projectUuid = (await call(stack.app, org.key, 'POST', '/project', { name: 'shop' })).json().uuid;
  });

  it('GET /projects: each project with all-time and last-24-hours activity, only the caller’s', async () => {
    const res = await call(stack.app, org.key, 'GET', '/projects');
    expect(res.statusCode).toBe(200);
    const projects = res.json();
    expect(projects).toHaveLength(1);
    // Two traces, one failed; each trace's cost is its LLM span's, as the roots have none of their own.
    expect(projects[0]).toMatchObject({
      uuid: projectUuid,
      name: 'shop',
      traces: 2,
      traces_24h: 2,
      cost_24h: 0.5,
      error_rate_24h: 0.5,
      last_activity: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('POST /traces: root rows newest first, with the trace’s totals and span count', async () => {
    const res = await call(stack.app, org.key, 'POST', '/traces', { project_uuid: projectUuid });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ total: 2, page: 1, total_pages: 1, page_size: 20 });
    expect(page.results.map((r: { trace_id: string }) => r.trace_id)).toEqual([second.root, first.root]);
    expect(page.results[0]).toMatchObject({
      trace_name: 'refund',
      status: 'error',
      cost: 0.25,
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      span_count: 3,
      tags: [],
      scores: [],
      project_uuid: projectUuid,
    });
    expect(page.results[0].inputs).toBeUndefined();
  });

  it('POST /traces: newest first, oldest first or slowest first', async () => {
    const sorted = (await call(stack.app, org.key, 'POST', '/project', { name: 'sorted' })).json().uuid;
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, depth, start_ts, latency)
      values (${org.id}, ${a}, ${a}, ${a}, ${sorted}, true, 0, now() - interval '30 seconds', 1),
             (${org.id}, ${b}, ${b}, ${b}, ${sorted}, true, 0, now() - interval '20 seconds', 5),
             (${org.id}, ${c}, ${c}, ${c}, ${sorted}, true, 0, now() - interval '10 seconds', 3)`;
    const ids = async (sort?: string) =>
      (await call(stack.app, org.key, 'POST', '/traces', { project_uuid: sorted, sort }))
        .json()
        .results.map((r: { trace_id: string }) => r.trace_id);
    expect(await ids()).toEqual([c, b, a]);
    expect(await ids('oldest')).toEqual([a, b, c]);
    expect(await ids('slowest')).toEqual([b, c, a]);
    const bad = await call(stack.app, org.key, 'POST', '/traces', { project_uuid: sorted, sort: 'loudest' });
    expect(bad.statusCode).toBe(422);
  });

  it('POST /traces without its count answers the page alone, and POST /traces/count counts the same traces', async () => {
    const counted = (await call(stack.app, org.key, 'POST', '/project', { name: 'counted' })).json().uuid;
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, depth, start_ts, status)
      select ${org.id}, id, id, id, ${counted}, true, 0, now() - i * interval '1 second', case when i % 3 = 0 then 'error' else 'success' end
      from (select gen_random_uuid() as id, i from generate_series(1, 25) i) r`;
    const traces = async (body: object) =>
      (await call(stack.app, org.key, 'POST', '/traces', { project_uuid: counted, page_size: 10, ...body })).json();
    const count = async (body: object) => {
      const res = await call(stack.app, org.key, 'POST', '/traces/count', { project_uuid: counted, ...body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().total;
    };
    // A full page does not know what follows it: the next page is offered.
    const first = await traces({ count: false });
    expect(first).toMatchObject({ total: 10, total_exact: false, total_pages: 2 });
    expect(first.results).toHaveLength(10);
    // The last page knows the total all the same.
    expect(await traces({ count: false, page: 3 })).toMatchObject({ total: 25, total_exact: true, total_pages: 3 });
    expect(await count({})).toBe(25);
    // The count follows the page's filters (page, order and content aside), and is the counted page's total.
    const errors = { status: 'error', sort: 'oldest', page: 2, content: true };
    expect(await count(errors)).toBe(8);
    expect((await traces({ status: 'error' })).total).toBe(8);
    expect(await count({ project_uuid: undefined, project_name: 'nope' })).toBe(0);
    // Another organization counts its own.
    const theirs = await call(stack.app, other.key, 'POST', '/traces/count', { project_uuid: counted });
    expect(theirs.json()).toEqual({ total: 0 });
  });

  it('POST /traces: filters and a search over every span of the trace narrow the rows', async () => {
    const ids = async (body: object) =>
      (await call(stack.app, org.key, 'POST', '/traces', { project_name: 'shop', ...body }))
        .json()
        .results.map((r: { trace_id: string }) => r.trace_id);
    expect(await ids({ status: 'error' })).toEqual([second.root]);
    expect(await ids({ filter_field: 'trace_name', filter_operator: 'equals', filter_value: 'checkout' })).toEqual([
      first.root,
    ]);
    // The words are in a child span's metadata, not in the root.
    expect(await ids({ search: 'umbrella' })).toEqual([first.root]);
    expect(await ids({ search: '"granite kettle"' })).toEqual([second.root]);
    expect(await ids({ search: 'velvet kettle' })).toEqual([]);
    expect(await ids({ search: 'UMBRELLA' })).toEqual([first.root]);
    expect(await ids({ search: 'umbrell' })).toEqual([]);
    expect(await ids({ search: 'retriever' })).toEqual([second.root, first.root]);
    expect(await ids({ search: 'retriever -umbrella' })).toEqual([second.root]);
    // No word to look up: refused (test/api/console-search.int.test.ts).
    expect(
      (await call(stack.app, org.key, 'POST', '/traces', { project_name: 'shop', search: '100%' })).statusCode,
    ).toBe(422);
    expect(await ids({ search: 'nowhere' })).toEqual([]);
    expect((await call(stack.app, org.key, 'POST', '/traces', { project_name: 'nope' })).json()).toMatchObject({
      total: 0,
      results: [],
    });
  });

  it('GET /trace/{id}/skeleton: every span’s place, kind and timing in execution order, no payloads', async () => {
    const res = await call(stack.app, org.key, 'GET', `/trace/${first.llm}/skeleton`);
    expect(res.statusCode, res.body).toBe(200);
    const skeleton = res.json();
    expect(skeleton.root_trace_id).toBe(first.root);
    expect(
      skeleton.spans.map((s: { trace_id: string; depth: number; kind: string | null }) => [
        s.trace_id,
        s.depth,
        s.kind,
      ]),
    ).toEqual([
      [first.root, 0, null],
      [first.child, 1, 'retriever'],
      [first.llm, 2, 'llm'],
    ]);
    // Starts to the millisecond, for the timeline: the LLM call began a second after its trace.
    expect(skeleton.spans[0].start_timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const gap = Date.parse(skeleton.spans[2].start_timestamp) - Date.parse(skeleton.spans[0].start_timestamp);
    expect(Math.abs(gap - 1000)).toBeLessThan(20);
    expect(skeleton.spans[2]).toMatchObject({
      parent_trace_id: first.child,
      trace_name: 'answer',
      cost: 0.25,
      total_tokens: 15,
      status: null,
      execution_order: 2,
      latency: expect.any(Number),
    });
    expect(Object.keys(skeleton.spans[0])).not.toContain('inputs');
    expect((await call(stack.app, other.key, 'GET', `/trace/${first.root}/skeleton`)).statusCode).toBe(404);
    expect((await call(stack.app, org.key, 'GET', `/trace/${randomUUID()}/skeleton`)).statusCode).toBe(404);
  });

  it('GET /span/{id}: one span with all its fields and no children', async () => {
    const res = await call(stack.app, org.key, 'GET', `/span/${first.llm}`);
    expect(res.statusCode, res.body).toBe(200);
    const span = res.json();
    expect(span).toMatchObject({
      trace_id: first.llm,
      root_trace_id: first.root,
      project_name: 'shop',
      configuration: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      cost: 0.25,
      scores: [],
      comments: [],
    });
    expect(span.children).toBeUndefined();
    expect((await call(stack.app, other.key, 'GET', `/span/${first.llm}`)).statusCode).toBe(404);
  });

  it('stores a span whose payload is far past what search reads (about 5 MB of distinct words), and finds its first words', async () => {
    const words = Array.from({ length: 700_000 }, (_, i) =>
      `w${i.toString(36)}x`.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]),
    );
    const big = randomUUID();
    const res = await call(stack.app, org.key, 'POST', '/trace_log', {
      trace_id: big,
      project_name: 'big',
      trace_name: 'big',
      output: `opening ${words.join(' ')}`,
    });
    expect(res.statusCode).toBe(200);
    const read = await readTrace(stack.app, org.key, big);
    expect(read.statusCode).toBe(200);
    expect(read.json().output.length).toBeGreaterThan(4_800_000);
    const found = await call(stack.app, org.key, 'POST', '/traces', { project_name: 'big', search: 'opening' });
    expect(found.json().results.map((r: { trace_id: string }) => r.trace_id)).toEqual([big]);
  });

  /** As the statistics job does: the partitions holding this organization's spans, never the partitioned table as a whole. */
  async function analyzePartitions() {
    const changed = await sql<{ name: string }[]>`
      select distinct tableoid::regclass::text as name from spans where organization_id = ${org.id}`;
    for (const { name } of changed) await sql`analyze ${sql(name)}`;
  }

  it('the search reads its index, not every trace of a large project (runs last: it adds 20,000 traces)', async () => {
    // Many more traces in the project, none with the word: the plan for a large project.
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, trace_name, output, search_words, depth, start_ts)
      select ${org.id}, id, id, id, ${projectUuid}, true, 'filler', 'filler text number ' || n, ${searchWordsOf({ output: 'filler text number 1' })}, 0, now() - n * interval '1 second'
      from (select gen_random_uuid() as id, n from generate_series(1, 20000) n) f`;
    await analyzePartitions();
    const { page, params } = rootListingSql({
      organizationId: org.id,
      projectId: projectUuid,
      search: 'umbrella',
      page: 1,
      pageSize: 20,
    });
    const plan = (await sql.unsafe(`explain ${page}`, params as never[])).map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Bitmap Index Scan on spans_search/);
  });

  it('walks the newest traces for a word most spans hold: the newest page, its total a lower bound', async () => {
    // After the test above, 'filler' is in 20,000 spans: the statistics make it common, and the index
    // would hand back every one of them. Another project holds 2,500 traces without the word, and a small
    // one holds three traces, one with it.
    const addRoots = (project: string, n: number, output: (i: number) => string) =>
      sql`
        insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, project_id, created, trace_name, output, search_words, depth, start_ts)
        select ${org.id}, id, id, id, ${project}, true, 'other', (${sql.array(Array.from({ length: n }, (_, i) => output(i)))}::text[])[i],
               string_to_array((${sql.array(Array.from({ length: n }, (_, i) => searchWordsOf({ output: output(i) }).join(' ')))}::text[])[i], ' '),
               0, now() - i * interval '1 second'
        from (select gen_random_uuid() as id, i from generate_series(1, ${n}) i) f`;
    const plain = (await call(stack.app, org.key, 'POST', '/project', { name: 'plain' })).json().uuid;
    const small = (await call(stack.app, org.key, 'POST', '/project', { name: 'small' })).json().uuid;
    await addRoots(plain, 2500, () => 'nothing to see');
    await addRoots(small, 3, (i) => (i === 1 ? 'filler here' : 'quiet'));
    await analyzePartitions();
    const traces = async (body: object) =>
      (await call(stack.app, org.key, 'POST', '/traces', { page_size: 20, ...body })).json();

    const page = await traces({ project_uuid: projectUuid, search: 'filler' });
    const newest = await sql`
      select trace_id from spans where project_id = ${projectUuid} and output like 'filler%' order by start_ts desc limit 20`;
    expect(page.results.map((r: { trace_id: string }) => r.trace_id)).toEqual(newest.map((r) => r.trace_id));
    expect(page).toMatchObject({ total: 20, total_exact: false, total_pages: 2, searched_roots: null });
    expect((await traces({ project_uuid: projectUuid, search: 'filler', page: 2 })).results).toHaveLength(20);

    // Only the newest 2,000 traces of the plain project are tested, and it says so.
    const none = await traces({ project_uuid: plain, search: 'filler' });
    expect(none).toMatchObject({ total: 0, total_exact: false, searched_roots: 2000, results: [] });
    // The walk saw every trace of the small project: its total is exact.
    const one = await traces({ project_uuid: small, search: 'filler' });
    expect(one).toMatchObject({ total: 1, total_exact: true, total_pages: 1, searched_roots: null });
    expect((await traces({ project_uuid: small, search: '-filler' })).total).toBe(2);
  });
});

describe('the live tail', () => {
  const openLive = (key: string, projectUuid: string) => openLiveAt(base, key, projectUuid);
  // How long a stream is still watched once the expected rows are in: a row that should not be there
  // (another project's, published around the same time) would arrive within it.
  const SETTLE_MS = 500;

  it('sends each new root trace of the project as a row, and nothing of other projects or organizations', async () => {
    const projectUuid = (await call(stack.app, org.key, 'POST', '/project', { name: 'live' })).json().uuid;
    const viewer = (await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'watcher' })).json()
      .key;
    const live = await openLive(viewer, projectUuid);
    try {
      // Rows that must not come, written before and after the project's own.
      await writeTrace(org.key, 'elsewhere', { name: 'not-here', words: 'x', startedAgo: 5 });
      const mine = await writeTrace(org.key, 'live', { name: 'live-one', words: 'x', startedAgo: 5 });
      await writeTrace(org.key, 'elsewhere', { name: 'not-here-either', words: 'x', startedAgo: 5 });
      await writeTrace(other.key, 'live', { name: 'not-theirs', words: 'x', startedAgo: 5 });
      const last = await writeTrace(org.key, 'live', { name: 'live-two', words: 'x', startedAgo: 5 });
      await expect.poll(() => live.traceIds().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      expect(live.traceIds().sort()).toEqual([mine.root, last.root].sort());
      expect(live.events.find((e) => e.data.trace_id === mine.root)!.data).toMatchObject({
        trace_name: 'live-one',
        span_count: expect.any(Number),
        project_uuid: projectUuid,
      });
    } finally {
      await live.close();
    }
  });

  it('skips a message it cannot read and keeps the stream', async () => {
    const projectUuid = (await call(stack.app, org.key, 'POST', '/project', { name: 'live-garbled' })).json().uuid;
    const live = await openLive(org.key, projectUuid);
    const redis = testRedis();
    try {
      const channel = stack.app.keys.liveRoots(org.id);
      for (const bad of ['{not json', '{}', '[null]', JSON.stringify([{ project_id: projectUuid }])])
        expect(await redis.publish(channel, bad)).toBeGreaterThan(0);
      const mine = await writeTrace(org.key, 'live-garbled', { name: 'after-garble', words: 'x', startedAgo: 5 });
      await expect.poll(() => live.traceIds(), { timeout: 10_000 }).toEqual([mine.root]);
      expect(live.ended()).toBe(false);
    } finally {
      await live.close();
      await redis.quit();
    }
  });

  it('refuses a stream without a valid key, and takes no key from the URL', async () => {
    const wrong = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${randomUUID()}`, {
      headers: { 'x-api-key': 'sl_wrong' },
    });
    expect(wrong.status).toBe(401);
    // A key in a URL ends up in logs and browser history: the console's tail authenticates with its cookie.
    const inUrl = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${randomUUID()}&api_key=${org.key}`);
    expect(inUrl.status).toBe(401);
  });
});
