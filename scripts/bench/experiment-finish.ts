// Benchmark 5, experiment finish: finishing an experiment of 100k root traces (1M spans), and the latency
// of other API requests while it runs. Seeds its own database, runs the real API and worker processes, and
// writes bench/results/experiment-finish.json.
//
// A finish recomputes everything from the spans, so the same experiment is finished RUNS times in a row and
// the figures are medians over the runs. During each finish, another client lists experiments in a loop (a
// real, authenticated query), and STALLED_READERS clients ask for the experiment's stats and never read the
// answer: they must not hold up the API.
import { getOrCreateProject } from '@sightline/db';
import { probe, timeSequential } from './lib/load';
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { createBenchStack, freePort, peakRssMb, type BenchStack } from './lib/stack';

const ROOTS = Number(process.env.BENCH_ROOTS ?? 100_000);
const CHILDREN = Number(process.env.BENCH_CHILDREN ?? 9);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const STALLED_READERS = 12;
const IDLE_PROBE_MS = 5000;
const TARGET_SECONDS = 5;

/** Clients that request the stats and then read nothing: they must not hold the API's connections. */
function stalledReaders(stack: BenchStack, url: string, count: number) {
  return Array.from({ length: count }, () => {
    const controller = new AbortController();
    fetch(url, { headers: stack.headers, signal: controller.signal }).catch(() => {});
    return controller;
  });
}

const latencies = (xs: number[]) => ({ n: xs.length, p50: round(quantile(xs, 0.5)), p99: round(quantile(xs, 0.99)) });

const stack = await createBenchStack({ port: await freePort() });
const { sql } = stack;
try {
  const org = stack.organizationId;
  const project = await getOrCreateProject(sql, org, 'bench');
  const [{ uuid: experiment }] = await sql`
    insert into experiments (organization_id, project_id, name, run_name) values (${org}, ${project.uuid}, 'bench', 'bench') returning uuid`;

  let t = performance.now();
  // Roots carry the experiment and two scores; children carry the LLM usage.
  await sql`
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                       trace_name, start_ts, latency, experiment_uuid, scores, versions)
    select ${org}::uuid, id, ${project.uuid}::uuid, id, id, true, 0, 0, 'case', now() - i * interval '1 ms', random() * 3,
           ${experiment}::uuid, jsonb_build_array(jsonb_build_object('name', 'accuracy', 'score', (i % 2)), jsonb_build_object('name', 'f1', 'score', random())), '{}'
    from (select gen_random_uuid() as id, i from generate_series(1, ${ROOTS}) i) g`;
  await sql`
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                       trace_name, input_tokens, output_tokens, total_tokens, cost, versions)
    select ${org}::uuid, gen_random_uuid(), ${project.uuid}::uuid, r.trace_id, r.trace_id, true, 1, c, 'llm', 100, 20, 120, 0.0005, '{}'
    from spans r cross join generate_series(1, ${CHILDREN}) c
    where r.organization_id = ${org} and r.experiment_uuid = ${experiment}`;
  await sql`vacuum (analyze) spans`;
  const seedSeconds = (performance.now() - t) / 1000;
  const [{ n: spanCount }] = await sql`select count(*)::int as n from spans`;
  console.log(`seeded ${spanCount} spans in ${round(seedSeconds)} s`);

  await stack.start();
  const listExperiments = {
    url: `${stack.base}/experiments`,
    method: 'POST' as const,
    headers: stack.headers,
    body: '{}',
  };
  await timeSequential(listExperiments, 20);
  const idle = probe(listExperiments);
  await new Promise((r) => setTimeout(r, IDLE_PROBE_MS));
  const idleLatencies = await idle.stop();

  const runs: {
    seconds: number;
    http_status: number;
    response_mb: number;
    entries: number;
    during: ReturnType<typeof latencies>;
  }[] = [];
  const duringAll: number[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const stalled = stalledReaders(stack, `${stack.base}/experiment/${experiment}/stats`, STALLED_READERS);
    const during = probe(listExperiments);
    t = performance.now();
    const res = await fetch(`${stack.base}/experiment/${experiment}/finished`, {
      method: 'POST',
      headers: stack.headers,
      body: '{}',
    });
    const body = await res.text();
    const seconds = (performance.now() - t) / 1000;
    const duringLatencies = await during.stop();
    for (const reader of stalled) reader.abort();
    if (res.status !== 200) throw new Error(`finish answered ${res.status}: ${body.slice(0, 500)}`);
    const entries = (JSON.parse(body) as { parent_trace_stats: unknown[] }).parent_trace_stats.length;
    if (entries !== ROOTS) throw new Error(`finish answered ${entries} entries for ${ROOTS} roots`);
    duringAll.push(...duringLatencies);
    runs.push({
      seconds: round(seconds, 2),
      http_status: res.status,
      response_mb: round(body.length / 2 ** 20),
      entries,
      during: latencies(duringLatencies),
    });
    console.log(
      `finish ${run}/${RUNS}: ${round(seconds, 2)} s; other requests during it p50 ${runs.at(-1)!.during.p50} ms, p99 ${runs.at(-1)!.during.p99} ms`,
    );
  }
  const [stored] = await sql`select status, num_samples, pinned_stats from experiments where uuid = ${experiment}`;

  const finishSeconds = median(runs.map((r) => r.seconds));
  const duringP50 = median(runs.map((r) => r.during.p50)),
    duringP99 = median(runs.map((r) => r.during.p99));
  const idleFigures = latencies(idleLatencies);
  const rss = { api: round(peakRssMb(stack.apiPid)), worker: round(peakRssMb(stack.workerPid)) };
  const summary: Row[] = [
    {
      figure: `Finish of ${ROOTS.toLocaleString('en')} roots (${spanCount.toLocaleString('en')} spans), median of ${RUNS}`,
      value: `${round(finishSeconds, 2)} s`,
      target: `≤ ${TARGET_SECONDS} s`,
      met: finishSeconds <= TARGET_SECONDS,
    },
    {
      figure: 'Other requests (list experiments), idle: p50 / p99',
      value: `${idleFigures.p50} / ${idleFigures.p99} ms`,
    },
    {
      figure: `Other requests during a finish (${STALLED_READERS} stalled stats readers): p50 / p99, median of ${RUNS}`,
      value: `${duringP50} / ${duringP99} ms`,
    },
    { figure: 'Peak RSS: API / worker', value: `${rss.api} / ${rss.worker} MB` },
  ];
  writeResult({
    benchmark: 'experiment-finish',
    summary,
    method: `the same experiment finished ${RUNS} times in a row (a finish recomputes everything); during each, one client lists experiments sequentially with a 10 ms pause, and ${STALLED_READERS} clients request the stats without reading them`,
    roots: ROOTS,
    spans: spanCount,
    seed_seconds: round(seedSeconds),
    runs,
    stored,
    other_requests_ms: { idle: idleFigures, during_finish_all_runs: latencies(duringAll) },
    peak_rss_mb: rss,
  });
} finally {
  await stack.stop();
}
