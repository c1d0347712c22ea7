// Benchmark: comparing experiments (issue 15). RUNS runs of SAMPLES samples each over one dataset of SAMPLES
// test cases, seeded straight into PostgreSQL, compared through the real API process. Writes
// bench/results/compare.json.
//
// Each root carries two scores, a latency, inputs, target and output; its cost sits on two LLM-call children,
// so that every trace's cost is a sum over its spans, the compare's most expensive read. The compare is timed
// with sequential requests after a warm-up, and so is a page of its rows. Its two parts are timed on their
// own too, in this process: the read of the samples, and the statistics on one thread. While the compares
// run, another client lists experiments in a loop: the statistics run on the API's thread pool, so its
// event loop stays free.
import { compareRuns, type RunSample } from '@sightline/core';
import { compareSamples, createSql, getOrCreateProject } from '@sightline/db';
import { probe, timeSequential } from './lib/load';
import { seedExperimentRuns } from './lib/seed';
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { createBenchStack, freePort, peakRssMb } from './lib/stack';

const RUNS = 5;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10_000);
const REPS = Number(process.env.BENCH_REPS ?? 10);
const WARMUP = 2;
const PAGE_SIZE = 50;
const TARGET_MS = 2000;

const latencies = (xs: number[]) => ({ n: xs.length, p50: round(quantile(xs, 0.5)), p99: round(quantile(xs, 0.99)) });

async function timeInProcess<T>(work: () => Promise<T> | T): Promise<{ ms: number[]; result: T }> {
  const ms: number[] = [];
  let result!: T;
  for (let i = 0; i < WARMUP + REPS; i++) {
    const t0 = performance.now();
    result = await work();
    if (i >= WARMUP) ms.push(performance.now() - t0);
  }
  return { ms, result };
}

const stack = await createBenchStack({ port: await freePort() });
const { sql } = stack;
try {
  const org = stack.organizationId;
  const project = await getOrCreateProject(sql, org, 'bench');

  // ---- seed --------------------------------------------------------------------------------------------
  const t = performance.now();
  const uuids = await seedExperimentRuns(sql, {
    organizationId: org,
    projectId: project.uuid,
    runs: RUNS,
    samples: SAMPLES,
  });
  // What autovacuum does after a bulk insert: statistics and the visibility map (for index-only scans).
  await sql`vacuum (analyze) spans`;
  const seedSeconds = (performance.now() - t) / 1000;
  const [{ spans }] = await sql`select count(*)::int as spans from spans`;
  console.log(`seeded ${RUNS} runs of ${SAMPLES} samples (${spans} spans) in ${round(seedSeconds)} s`);

  // ---- parts, in this process ---------------------------------------------------------------------------
  // Read as the API reads: with JIT off, as its own pool has it.
  const apiSql = createSql(stack.databaseUrl, { max: 1, connection: { jit: 'off' } });
  // postgres.js learns the array types when a client first connects, and sql.array needs them when the
  // query is built: connect first, as the API's authentication query does for it.
  await apiSql`select 1`;
  const read = await timeInProcess(() => compareSamples(apiSql, org, uuids));
  await apiSql.end();
  const stats = await timeInProcess(() => compareRuns(JSON.parse(read.result) as RunSample[], uuids, uuids[0]));
  console.log(
    `samples read: p50 ${round(median(read.ms))} ms (${round(read.result.length / 2 ** 20)} MB of JSON); statistics: p50 ${round(median(stats.ms))} ms`,
  );

  // ---- through the API ----------------------------------------------------------------------------------
  await stack.start({ worker: false });
  const request = (path: string, body: object) => ({
    url: `${stack.base}${path}`,
    method: 'POST' as const,
    headers: stack.headers,
    body: JSON.stringify(body),
  });
  const compare = request('/experiments/compare', { experiment_uuids: uuids, baseline_uuid: uuids[0] });
  const rows = request('/experiments/compare/rows', {
    experiment_uuids: uuids,
    baseline_uuid: uuids[0],
    page_size: PAGE_SIZE,
  });
  const listExperiments = request('/experiments', {});

  const answer = await fetch(compare.url, compare);
  const body = (await answer.json()) as {
    cases: { total: number; in_all: number };
    metrics: { name: string; comparisons: { pairs: number }[] }[];
  };
  const names = body.metrics.map((m) => m.name).join(',');
  if (answer.status !== 200 || body.cases.in_all !== SAMPLES || names !== 'accuracy,relevance,latency,cost')
    throw new Error(`the compare answered ${answer.status}: ${JSON.stringify(body).slice(0, 500)}`);
  if (body.metrics.some((m) => m.comparisons.some((c) => c.pairs !== SAMPLES)))
    throw new Error('a comparison is missing pairs');

  await timeSequential(listExperiments, 20);
  const idle = probe(listExperiments);
  await new Promise((r) => setTimeout(r, 3000));
  const idleLatencies = await idle.stop();
  const during = probe(listExperiments);
  const compareMs = await timeSequential(compare, REPS, WARMUP);
  const duringLatencies = await during.stop();
  const rowsMs = await timeSequential(rows, REPS * 5, WARMUP);

  const figures = {
    compare: latencies(compareMs),
    rows: latencies(rowsMs),
    samples_read: latencies(read.ms),
    statistics: latencies(stats.ms),
    other_requests_idle: latencies(idleLatencies),
    other_requests_during_compares: latencies(duringLatencies),
  };
  const rss = round(peakRssMb(stack.apiPid));
  const label = `${RUNS} runs × ${SAMPLES.toLocaleString('en')} samples`;
  const summary: Row[] = [
    {
      figure: `POST /experiments/compare, ${label}: p50 / p99`,
      value: `${figures.compare.p50} / ${figures.compare.p99} ms`,
      target: `≤ ${TARGET_MS / 1000} s (p99)`,
      met: figures.compare.p99 <= TARGET_MS,
    },
    {
      figure: 'Its parts, p50: the samples read (one statement) / the statistics (one thread)',
      value: `${figures.samples_read.p50} / ${figures.statistics.p50} ms`,
    },
    {
      figure: `POST /experiments/compare/rows, first page of ${PAGE_SIZE}: p50 / p99`,
      value: `${figures.rows.p50} / ${figures.rows.p99} ms`,
    },
    {
      figure: 'Other requests (list experiments): idle, and during the compares: p50 / p99',
      value: `${figures.other_requests_idle.p50} / ${figures.other_requests_idle.p99} ms, ${figures.other_requests_during_compares.p50} / ${figures.other_requests_during_compares.p99} ms`,
    },
    { figure: 'Peak RSS: API', value: `${rss} MB` },
  ];
  writeResult({
    benchmark: 'compare',
    summary,
    method: `${REPS} sequential compares after ${WARMUP} warm-ups (${REPS * 5} for the rows page), timed by the client to the last byte; the parts timed in the benchmark's process, ${REPS} times each after ${WARMUP} warm-ups; one client lists experiments with a 10 ms pause, for 3 s idle and throughout the compares`,
    data: {
      runs: RUNS,
      samples_per_run: SAMPLES,
      spans,
      seed_seconds: round(seedSeconds),
      samples_json_mb: round(read.result.length / 2 ** 20, 2),
    },
    results: figures,
    peak_rss_mb: { api: rss },
  });
} finally {
  await stack.stop();
}
