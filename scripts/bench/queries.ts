// Benchmark 4, queries: get_trace_logs, GET /trace_log/{id} and the console's calls (POST /traces, a skeleton,
// the dashboard) over 1M spans seeded straight into
// PostgreSQL, answered by the real API process. Writes bench/results/queries.json.
//
// Data: project `bench` holds 200k traces of 5 spans (a root with three children and one grandchild),
// spread over 30 days, with realistic columns: 4 root names and 4 child names, 10% errors, metadata with
// five keys (a customer id among 1000), tags, inputs, output, configuration, token counts and, on roots,
// two scores. Project `agent` holds three traces of 10,000 spans (a root, 99 steps, 100 calls under each);
// project `experiments` 5 runs of an experiment over 10,000 cases (seedExperimentRuns), compared.
//
// Each case is timed with sequential requests (service time, not queueing): per round, a warm-up and then
// REPS timed requests; cases are interleaved within a round so that noise from other work on the machine
// spreads over all of them. Figures are the median over ROUNDS of each round's p50 and p99.
import { foldTraceGroups, foldTraceHours, getOrCreateProject } from '@sightline/db';
import { timeSequential } from './lib/load';
import { seedAgentTrace, seedExperimentRuns, seedTraces } from './lib/seed';
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { createBenchStack, freePort, peakRssMb } from './lib/stack';

const TRACES = Number(process.env.BENCH_TRACES ?? 200_000);
/** Another size is a record of its own (BENCH_TRACES=2000000: the 10M-span run), beside the 1M one. */
const RECORD = TRACES === 200_000 ? 'queries' : `queries-${TRACES}-traces`;
/**
 * BENCH_BULK_SEED=1: the spans are seeded before the migrations that copy the roots and sum them (00031 on), whose
 * backfills then build those copies in bulk, as an upgrade does; their triggers would otherwise run once a root.
 * The same rows either way; 10M spans seed in a fraction of the time.
 */
const BULK_SEED = process.env.BENCH_BULK_SEED === '1';
const COMPARE_RUNS = 5,
  COMPARE_SAMPLES = 10_000;
const COMPARE_CASE = `POST /experiments/compare, ${COMPARE_RUNS} runs × ${COMPARE_SAMPLES.toLocaleString('en')} samples`;
const LAST_MIGRATION_WITHOUT_COPIES = 30;
const BIG_TRACE_STEPS = 99,
  BIG_TRACE_CALLS = 100; // 1 + 99 + 99 * 100 = 10,000 spans
const BIG_TRACES = 3;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REPS = Number(process.env.BENCH_REPS ?? 200);
const WARMUP = 10;
/**
 * A case slower than BUDGET_MS / REPS per request gets fewer requests per round (at least MIN_REPS), so
 * that the run stays within minutes: its p99 then rests on fewer samples, which the results state.
 */
const BUDGET_MS = Number(process.env.BENCH_CASE_BUDGET_MS ?? 20_000);
const MIN_REPS = 15;
const PAGE_SIZE = 50;
/** The deep page: page 500 (rows 24,951-25,000), or the middle page of a result with fewer than 1000 pages. */
const DEEP_PAGE = 500;

const THREE_FILTERS = [
  { field: 'trace_name', operator: 'equals', value: 'rag-query' },
  { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' },
  { field: 'score:accuracy', operator: 'greater_than_or_equal', value: '0.9' },
];

const stack = await createBenchStack({
  port: await freePort(),
  ...(BULK_SEED && { migrateUpTo: LAST_MIGRATION_WITHOUT_COPIES }),
});
const { sql } = stack;

try {
  const project = await getOrCreateProject(sql, stack.organizationId, 'bench');
  const agent = await getOrCreateProject(sql, stack.organizationId, 'agent');
  const org = stack.organizationId;

  // ---- seed --------------------------------------------------------------------------------------------
  const t = performance.now();
  await seedTraces(sql, {
    organizationId: org,
    projectId: project.uuid,
    traces: TRACES,
    onProgress: (n) => process.stdout.write(`\rseeded ${n} spans`),
  });
  // A few agent traces, so that the one read is not the only large one; the first is read.
  const [bigRoot] = await Promise.all(
    Array.from({ length: BIG_TRACES }, (_, t) =>
      seedAgentTrace(sql, {
        organizationId: org,
        projectId: agent.uuid,
        name: `agent-${t}`,
        steps: BIG_TRACE_STEPS,
        callsPerStep: BIG_TRACE_CALLS,
      }),
    ),
  );
  // Issue 38: the experiment compare of 5 runs × 10,000 samples, beside the rest of the data.
  const experiments = await getOrCreateProject(sql, org, 'experiments');
  const runs = await seedExperimentRuns(sql, {
    organizationId: org,
    projectId: experiments.uuid,
    runs: COMPARE_RUNS,
    samples: COMPARE_SAMPLES,
  });
  let migrationSeconds: number | undefined;
  if (BULK_SEED) {
    const m = performance.now();
    await stack.migrate();
    migrationSeconds = (performance.now() - m) / 1000;
    console.log(`\nthe migrations past ${LAST_MIGRATION_WITHOUT_COPIES} took ${round(migrationSeconds)} s`);
  }
  // What the worker's trace-hours job does within seconds: the roots' changes folded into their sums.
  await foldTraceHours(sql);
  await foldTraceGroups(sql);
  // What autovacuum does after a bulk insert: statistics and the visibility map (for index-only scans).
  await sql`vacuum (analyze) spans, span_scores, trace_roots, trace_hours, trace_groups, trace_group_changes`;
  const seedSeconds = (performance.now() - t) / 1000;
  const [{ spans, big }] = await sql`
    select count(*)::int as spans, count(*) filter (where root_trace_id = ${bigRoot!})::int as big from spans`;
  // The partitions' sizes: a partitioned table has no storage of its own.
  const [{ size }] = await sql`
    select pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size from pg_inherits where inhparent = 'spans'::regclass`;
  console.log(
    `\nseeded ${spans} spans (${big} in the agent trace) in ${round(seedSeconds)} s; spans table with indexes: ${size}`,
  );

  // ---- measure -----------------------------------------------------------------------------------------
  await stack.start({ worker: true });
  const listUrl = `${stack.base}/get_trace_logs`;
  const list = async (body: object) => {
    const res = await fetch(listUrl, { method: 'POST', headers: stack.headers, body: JSON.stringify(body) });
    if (res.status !== 200)
      throw new Error(`get_trace_logs ${JSON.stringify(body)} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as {
      total: number;
      total_pages: number;
      results: { trace_id: string; children: unknown[] }[];
    };
  };

  const filters: Record<string, object> = {
    'no filter': {},
    'trace_name = rag-query (indexed)': {
      filter_field: 'trace_name',
      filter_operator: 'equals',
      filter_value: 'rag-query',
    },
    'status = error (indexed)': { status: 'error' },
    'metadata customer_id = customer-0042': {
      filter_field: 'metadata',
      filter_key: 'customer_id',
      filter_operator: 'equals',
      filter_value: 'customer-0042',
    },
    'score:accuracy >= 0.9': {
      filter_field: 'score:accuracy',
      filter_operator: 'greater_than_or_equal',
      filter_value: '0.9',
    },
    // Issue 34: conditions joined by AND, an indexed one, a GIN-indexed one and a score (about 1 root in 120).
    'three filters (trace_name, metadata env, score:accuracy)': { filters: THREE_FILTERS },
  };
  type Case = {
    name: string;
    request: { url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };
    reps: number;
    info: Record<string, unknown>;
  };
  const cases: Case[] = [];
  for (const [name, filter] of Object.entries(filters)) {
    const first = await list({ project_name: 'bench', ...filter, page: 1, page_size: PAGE_SIZE });
    const deepPage = Math.min(DEEP_PAGE, Math.ceil(first.total_pages / 2));
    const deep = await list({ project_name: 'bench', ...filter, page: deepPage, page_size: PAGE_SIZE });
    // A page must come back full, each root with its whole trace: otherwise we would time an empty answer.
    for (const [page, number] of [
      [first, 1],
      [deep, deepPage],
    ] as const) {
      const expected = Math.min(PAGE_SIZE, first.total - (number - 1) * PAGE_SIZE);
      if (!expected || page.results.length !== expected)
        throw new Error(`${name}: page ${number} has ${page.results.length} roots`);
      if (page.results.some((r) => r.children.length !== 3)) throw new Error(`${name}: a root without its children`);
    }
    for (const [label, page] of [
      ['first page', 1],
      [`deep page ${deepPage}`, deepPage],
    ] as const) {
      const body = JSON.stringify({ project_name: 'bench', ...filter, page, page_size: PAGE_SIZE });
      cases.push({
        name: `get_trace_logs, ${name}, ${label}`,
        request: { url: listUrl, method: 'POST', headers: stack.headers, body },
        reps: REPS,
        info: { matching_roots: first.total, page, page_size: PAGE_SIZE },
      });
    }
  }
  const treeUrl = `${stack.base}/trace_log/${bigRoot}`;
  const tree = await fetch(treeUrl, { headers: stack.headers });
  const treeBody = await tree.text();
  const countSpans = (n: { children: unknown[] }): number =>
    1 + n.children.reduce<number>((a, c) => a + countSpans(c as { children: unknown[] }), 0);
  const treeSpans = countSpans(JSON.parse(treeBody));
  if (tree.status !== 200 || treeSpans !== big)
    throw new Error(`the agent trace answered ${tree.status} with ${treeSpans} spans`);
  cases.push({
    name: `GET trace_log/{id}, ${big}-span tree`,
    request: { url: treeUrl, method: 'GET', headers: stack.headers },
    reps: REPS,
    info: { spans: treeSpans, response_mb: round(treeBody.length / 2 ** 20, 2) },
  });

  // The console's calls: table rows (with each kind of filter and a search), a trace's skeleton, and the
  // dashboard over 7 days. A common word is in every trace (the newest roots are walked); a rare one in
  // none (the index answers); "call" is common in the agent project only, so in this one the walk tests
  // its 2,000 newest roots in vain.
  const consoleBodies: Record<string, object> = {
    ...filters,
    'search "assistant" (every trace)': { search: 'assistant' },
    'search "umbrella" (no trace)': { search: 'umbrella' },
    'search "call" (common elsewhere, in no trace here)': { search: 'call' },
    'three filters, costliest first': { filters: THREE_FILTERS, sort: 'costliest' },
    'three filters, most tokens first': { filters: THREE_FILTERS, sort: 'most_tokens' },
    'three filters, a search and the last 7 days': { filters: THREE_FILTERS, search: 'assistant', time_range: '7d' },
    'by name, A to Z': { sort: 'name_asc' },
    // Issue 34: a trace's totals are stored on its root, so a page is read from their indexes.
    'sort costliest, no filter': { sort: 'costliest' },
    'sort most_tokens, no filter': { sort: 'most_tokens' },
  };
  // As the console asks: each page without its count, and the count apart (one for every page and order).
  const tablePage = (name: string, filter: object, page: number) =>
    cases.push({
      name: `POST /traces, ${name}, ${page === 1 ? 'first page' : `page ${page}`}`,
      request: {
        url: `${stack.base}/traces`,
        method: 'POST',
        headers: stack.headers,
        body: JSON.stringify({ project_name: 'bench', ...filter, page, page_size: PAGE_SIZE, count: false }),
      },
      reps: REPS,
      info: { page, page_size: PAGE_SIZE },
    });
  for (const [name, filter] of Object.entries(consoleBodies)) tablePage(name, filter, 1);
  tablePage('no filter', {}, Math.min(DEEP_PAGE, Math.ceil(TRACES / PAGE_SIZE / 2)));
  const counted: Record<string, object> = {
    'no filter': {},
    'score:accuracy >= 0.9': filters['score:accuracy >= 0.9'],
    'three filters': { filters: THREE_FILTERS },
    'search "assistant" (every trace)': { search: 'assistant' },
  };
  for (const [name, filter] of Object.entries(counted))
    cases.push({
      name: `POST /traces/count, ${name}`,
      request: {
        url: `${stack.base}/traces/count`,
        method: 'POST',
        headers: stack.headers,
        body: JSON.stringify({ project_name: 'bench', ...filter }),
      },
      reps: REPS,
      info: {},
    });
  cases.push({
    name: `GET /trace/{id}/skeleton, ${big}-span trace`,
    request: { url: `${stack.base}/trace/${bigRoot}/skeleton`, method: 'GET', headers: stack.headers },
    reps: REPS,
    info: { spans: big },
  });
  const consolePost = (name: string, path: string, body: Record<string, unknown>) =>
    cases.push({
      name,
      request: { url: `${stack.base}${path}`, method: 'POST', headers: stack.headers, body: JSON.stringify(body) },
      reps: REPS,
      info: body,
    });
  consolePost('POST /dashboard, 7 days', '/dashboard', { project_uuid: project.uuid, time_range: '7d' });
  consolePost('POST /dashboard, a month', '/dashboard', { project_uuid: project.uuid, time_range: '1m' });
  // A filter leaves the hours' sums aside: the window's roots are read, from trace_roots.
  consolePost('POST /dashboard, a month, three filters', '/dashboard', {
    project_uuid: project.uuid,
    time_range: '1m',
    filters: THREE_FILTERS,
  });
  // The sessions and users pages: a page of groups over all time (a session holds 4 traces, a user about
  // TRACES / 5000), and one group's traces, as the page opens it.
  for (const by of ['session', 'user'] as const) {
    consolePost(`POST /trace-groups, by ${by}, first page`, '/trace-groups', { project_uuid: project.uuid, by });
    const group = {
      project_uuid: project.uuid,
      by,
      key: by === 'session' ? `session-${Math.floor(TRACES / 8)}` : 'user-42',
    };
    const res = await fetch(`${stack.base}/trace-group`, {
      method: 'POST',
      headers: stack.headers,
      body: JSON.stringify(group),
    });
    const { traces } = (await res.json()) as { traces?: unknown[] };
    if (!traces?.length) throw new Error(`the ${by} ${group.key} answered ${res.status} with no trace`);
    consolePost(`POST /trace-group, one ${by} (${traces.length} traces)`, '/trace-group', group);
  }

  const compare = { experiment_uuids: runs, baseline_uuid: runs[0] };
  const compared = await fetch(`${stack.base}/experiments/compare`, {
    method: 'POST',
    headers: stack.headers,
    body: JSON.stringify(compare),
  });
  const { cases: compareCases } = (await compared.json()) as { cases?: { in_all: number } };
  if (compareCases?.in_all !== COMPARE_SAMPLES)
    throw new Error(`the compare answered ${compared.status} with ${compareCases?.in_all} cases in all runs`);
  consolePost(COMPARE_CASE, '/experiments/compare', compare);

  for (const c of cases) {
    const probe = median(await timeSequential(c.request, 3));
    if (probe * REPS > BUDGET_MS) c.reps = Math.max(MIN_REPS, Math.floor(BUDGET_MS / probe));
  }

  const perRound = new Map(cases.map((c) => [c.name, [] as { p50: number; p99: number; mean: number }[]]));
  for (let r = 1; r <= ROUNDS; r++) {
    for (const c of cases) {
      const xs = await timeSequential(c.request, c.reps, Math.min(WARMUP, Math.ceil(c.reps / 10)));
      const figures = {
        p50: quantile(xs, 0.5),
        p99: quantile(xs, 0.99),
        mean: xs.reduce((a, b) => a + b, 0) / xs.length,
      };
      perRound.get(c.name)!.push(figures);
      console.log(`round ${r}/${ROUNDS}  ${c.name}: p50 ${round(figures.p50)} ms, p99 ${round(figures.p99)} ms`);
    }
  }

  const results = cases.map((c) => {
    const rounds = perRound.get(c.name)!;
    return {
      case: c.name,
      ...c.info,
      requests_per_round: c.reps,
      p50_ms: round(median(rounds.map((x) => x.p50))),
      p99_ms: round(median(rounds.map((x) => x.p99))),
      rounds: rounds.map((x) => ({ p50: round(x.p50), p99: round(x.p99), mean: round(x.mean) })),
    };
  });
  const figure = (name: string) => results.find((x) => x.case === name)!;
  const indexedFirst = figure(`get_trace_logs, trace_name = rag-query (indexed), first page`);
  const treeFigure = figure(`GET trace_log/{id}, ${big}-span tree`);
  const summary: Row[] = [];
  for (const x of results) {
    const isIndexed = x === indexedFirst,
      isTree = x === treeFigure;
    summary.push({
      figure: `${x.case}: p50 / p99${x.requests_per_round < REPS ? ` (${x.requests_per_round} requests a round)` : ''}`,
      value: `${x.p50_ms} / ${x.p99_ms} ms`,
      ...(isIndexed && { target: 'p50 ≤ 20 ms, p99 ≤ 100 ms', met: x.p50_ms <= 20 && x.p99_ms <= 100 }),
      // The 1M-span record keeps its first target; another size (the 10M-span run) takes issue 38's, p99 ≤ 300 ms.
      ...(isTree &&
        (TRACES === 200_000
          ? { target: '≤ 150 ms (p50 and p99)', met: x.p50_ms <= 150 && x.p99_ms <= 150 }
          : { target: 'p99 ≤ 300 ms', met: x.p99_ms <= 300 })),
      // Issue 38's: a 10,000-span trace's skeleton p99 ≤ 300 ms.
      ...(x.case.startsWith('GET /trace/{id}/skeleton') && { target: 'p99 ≤ 300 ms', met: x.p99_ms <= 300 }),
      // Issue 14's targets: the traces page p95 ≤ 300 ms, the dashboard's calls p95 ≤ 500 ms (p99 shown).
      ...(x.case.startsWith('POST /traces,') && { target: 'p99 ≤ 300 ms', met: x.p99_ms <= 300 }),
      ...(x.case === 'POST /dashboard, 7 days' && { target: 'p99 ≤ 500 ms', met: x.p99_ms <= 500 }),
      // Issue 38's: the dashboard over a month p99 ≤ 1 s.
      ...(x.case === 'POST /dashboard, a month' && { target: 'p99 ≤ 1 s', met: x.p99_ms <= 1000 }),
      // Issue 38's: the compare of 5 × 10,000 samples still ≤ 2 s.
      ...(x.case === COMPARE_CASE && { target: 'p99 ≤ 2 s', met: x.p99_ms <= 2000 }),
      // Issue 38's: the sessions and users pages p99 ≤ 500 ms.
      ...(x.case.startsWith('POST /trace-group') && { target: 'p99 ≤ 500 ms', met: x.p99_ms <= 500 }),
    });
  }
  writeResult({
    benchmark: RECORD,
    summary,
    method: `${ROUNDS} rounds; per round and case up to ${WARMUP} warm-up requests, then requests_per_round sequential requests (${REPS}, or fewer for a case slower than ${BUDGET_MS / REPS} ms, at least ${MIN_REPS}); figures are medians over rounds of each round's p50 and p99, timed by the client to the last byte`,
    data: {
      spans,
      traces: TRACES,
      spans_per_trace: 5,
      agent_trace_spans: big,
      seed_seconds: round(seedSeconds),
      ...(migrationSeconds !== undefined && {
        seeded_before_migration: LAST_MIGRATION_WITHOUT_COPIES + 1,
        migration_seconds: round(migrationSeconds),
      }),
      spans_table_size: size,
    },
    results,
    peak_rss_mb: { api: round(peakRssMb(stack.apiPid)) },
  });
} finally {
  await stack.stop();
}
