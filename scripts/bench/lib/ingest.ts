// The ingest benchmark, for single spans (`POST /trace_log`) and for batches (`POST /trace_logs/batch`).
// Each round measures, one after the other on the same machine: the bare-Fastify ceiling, the direct
// PostgreSQL ceiling, and Sightline at its maximum rate; then Sightline at fixed rates with visibility
// probes. Figures are medians over the rounds; ceilings are compared with the Sightline run of the same round.
// `atMaxRate` (one endpoint at its maximum rate, end to end) also serves ingest-otlp.ts.
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { JSONValue } from 'postgres';
import { getOrCreateProject, searchWordsOf } from '@sightline/db';
import { load, type LoadResult } from './load';
import { median, quantile, round, type Row } from './report';
import { createBenchStack, peakRssMb, rssMb, spawnNode, waitForHttp, type BenchStack } from './stack';
import { spanBodies, tracePool, type BenchSpan } from './spans';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CEILING_SECONDS = Number(process.env.BENCH_CEILING_SECONDS ?? 20);
const FIXED_SECONDS = Number(process.env.BENCH_FIXED_SECONDS ?? 30);
const BARE_PORT = 8191;

export type IngestMode = { name: 'ingest' | 'ingest-batch'; spansPerRequest: number; connections: number };

/** CPU seconds (user + system) used so far by the processes whose command line matches. */
export function cpuSeconds(pids: number[]): number {
  const ticks = Number(execSync('getconf CLK_TCK').toString().trim());
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      // exited
    }
  }
  return total;
}
const pidsOf = (pattern: string) =>
  execSync(`pgrep -f '${pattern}' || true`).toString().split('\n').filter(Boolean).map(Number);

/** Bodies for `POST /trace_log` (one span each) or `POST /trace_logs/batch` (`spansPerRequest` spans each). */
export function jsonBodies(spansPerRequest: number, traces: BenchSpan[][]): () => string {
  const next = spanBodies(traces);
  if (spansPerRequest === 1) return next;
  return () => `{"trace_logs":[${Array.from({ length: spansPerRequest }, next).join(',')}]}`;
}

/** Rows as the worker writes them, upserted straight into the spans table in 500-row statements. */
async function directPostgres(stack: BenchStack, seconds: number): Promise<number> {
  const { uuid: project_id } = await getOrCreateProject(stack.sql, stack.organizationId, 'ceiling');
  const next = spanBodies(tracePool('ceiling'));
  const columns = [
    'organization_id',
    'trace_id',
    'project_id',
    'root_trace_id',
    'parent_trace_id',
    'created',
    'versions',
    'trace_name',
    'depth',
    'execution_order',
    'start_ts',
    'end_ts',
    'status',
    'inputs',
    'output',
    'metadata',
    'tags',
    'configuration',
    'latency',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'cost',
    'end_user_identifier',
    'session_id',
    'children_ids',
    'search_words',
  ];
  const row = (span: Record<string, JSONValue>): Record<string, unknown> => ({
    organization_id: stack.organizationId,
    trace_id: span.trace_id,
    project_id,
    root_trace_id: span.root_trace_id,
    parent_trace_id: span.parent_trace_id,
    created: true,
    versions: stack.sql.json({}),
    trace_name: span.trace_name,
    depth: span.depth,
    execution_order: span.execution_order,
    start_ts: span.start_timestamp,
    end_ts: span.end_timestamp,
    status: span.status,
    inputs: stack.sql.json(span.inputs),
    output: span.output,
    metadata: stack.sql.json(span.metadata),
    tags: span.tags,
    configuration: stack.sql.json(span.configuration),
    latency: span.latency,
    input_tokens: span.input_tokens,
    output_tokens: span.output_tokens,
    total_tokens: span.total_tokens,
    cost: span.cost,
    end_user_identifier: span.end_user_identifier,
    session_id: span.session_id,
    children_ids: span.children ?? null,
    // The worker computes them; building them here costs the load generator, not PostgreSQL.
    search_words: searchWordsOf(span as { inputs?: unknown; output?: unknown; metadata?: unknown }),
  });
  const update = columns
    .slice(2)
    .map((c) => `${c} = excluded.${c}`)
    .join(', ');
  let written = 0;
  const deadline = performance.now() + seconds * 1000;
  // Two writers, as the worker's batcher runs two flushes at once.
  await Promise.all(
    [0, 1].map(async () => {
      while (performance.now() < deadline) {
        const rows = Array.from({ length: 500 }, () => row(JSON.parse(next())));
        await stack.sql`insert into spans ${stack.sql(rows as never, columns)} on conflict (organization_id, trace_id, part_at) do update set ${stack.sql.unsafe(update)}`;
        written += rows.length;
      }
    }),
  );
  return written / seconds;
}

/**
 * Posts a marked root span, times how long after its 200 it shows up in each read, and starts the next
 * probe no sooner than `intervalMs` after the previous one. One probe at a time: the probes' own reads
 * (the listing is asked every 10 ms) must not add load that grows with the lag they measure.
 */
function visibilityProbes(stack: BenchStack, intervalMs: number) {
  const byId: number[] = [],
    inListing: number[] = [];
  let running = true;
  let n = 0;
  const post = (path: string, body: unknown) =>
    fetch(`${stack.base}${path}`, { method: 'POST', headers: stack.headers, body: JSON.stringify(body) });
  const probe = async () => {
    const trace_id = crypto.randomUUID();
    const trace_name = `probe-${trace_id}`;
    const res = await post('/trace_log', {
      trace_id,
      project_name: 'bench',
      trace_name,
      status: 'success',
      output: 'probe',
    });
    await res.arrayBuffer();
    if (res.status !== 200) return;
    const accepted = performance.now();
    await Promise.all([
      (async () => {
        // GET waits (bounded) for the span's pending writes itself; 503 means the bound passed.
        for (;;) {
          const got = await fetch(`${stack.base}/trace_log/${trace_id}`, { headers: stack.headers });
          await got.arrayBuffer();
          if (got.status === 200) return byId.push(performance.now() - accepted);
        }
      })(),
      (async () => {
        for (;;) {
          const got = await post('/get_trace_logs', {
            project_name: 'bench',
            filter_field: 'trace_name',
            filter_operator: 'equals',
            filter_value: trace_name,
            page_size: 1,
          });
          if (((await got.json()) as { total: number }).total === 1)
            return inListing.push(performance.now() - accepted);
          await new Promise((r) => setTimeout(r, 10));
        }
      })(),
    ]);
  };
  const done = (async () => {
    while (running) {
      const next = new Promise((r) => setTimeout(r, intervalMs));
      await probe().catch(() => {});
      n++;
      await next;
    }
  })();
  return { stop: async () => ((running = false), await done, { probes: n, byId, inListing }) };
}

/** Samples the API's and the worker's resident memory and the backlog (span events accepted, not yet written). */
function sampler(stack: BenchStack) {
  const samples: { t: number; api_mb: number; worker_mb: number; backlog: number }[] = [];
  const t0 = performance.now();
  const timer = setInterval(async () => {
    const backlog = await waiting(stack);
    samples.push({
      t: round((performance.now() - t0) / 1000),
      api_mb: round(rssMb(stack.apiPid)),
      worker_mb: round(rssMb(stack.workerPid)),
      backlog,
    });
  }, 1000);
  return { samples, stop: () => clearInterval(timer) };
}

/** The organization's span events accepted and not yet written, over every span-write shard. */
async function waiting(stack: BenchStack): Promise<number> {
  const counts = await Promise.all(
    stack.shards.all.map((shard) => stack.redis.zcard(shard.keys.pendingOrganization(stack.organizationId))),
  );
  return counts.reduce((a, b) => a + b, 0);
}

async function waitForBacklog(stack: BenchStack, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await waiting(stack)) > 0) {
    if (Date.now() > deadline) throw new Error('backlog not drained in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const storedSpans = async (stack: BenchStack) =>
  (
    await stack.sql`select count(*)::int as n from spans s join projects p on p.id = s.project_id where p.name = 'bench' and s.created`
  )[0].n as number;

/** The CPU seconds each process of the machine has used so far. */
const machineCpu = (stack: BenchStack) => ({
  // With a cluster of API processes, its primary too: it accepts the connections and hands them out.
  api: cpuSeconds([...new Set([stack.apiPid, ...stack.apiPids()])]),
  worker: cpuSeconds(stack.workerPids()),
  postgres: cpuSeconds(pidsOf('postgres')),
  redis: cpuSeconds(pidsOf('redis-server')),
  loadgen: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
});

/** Sends `send`'s load for a few seconds (JIT, connection pools, the project cache) and lets it drain. */
export async function warmUp(stack: BenchStack, send: (seconds: number) => Promise<LoadResult>): Promise<void> {
  await send(5);
  await waitForBacklog(stack);
}

/**
 * Sightline at its maximum rate: `send` loads it for BENCH_SECONDS, then the round waits until everything
 * accepted is stored. Persisted spans/s is the rows stored meanwhile over the time from the first request
 * until the backlog is empty; `cpu_seconds` is each process's CPU over that same time.
 */
export async function atMaxRate(
  stack: BenchStack,
  spansPerRequest: number,
  send: (seconds: number) => Promise<LoadResult>,
  seconds = SECONDS,
) {
  const storedBefore = await storedSpans(stack);
  const watch = sampler(stack);
  const cpuBefore = machineCpu(stack);
  const t0 = performance.now();
  const run = await send(seconds);
  const acceptedSeconds = (performance.now() - t0) / 1000;
  await waitForBacklog(stack);
  const endToEndSeconds = (performance.now() - t0) / 1000;
  watch.stop();
  const cpuAfter = machineCpu(stack);
  const stored = (await storedSpans(stack)) - storedBefore;
  const accepted = run.ok * spansPerRequest;
  return {
    accepted_spans: accepted,
    // Every span id is new, so stored = accepted means none was lost or duplicated.
    stored_spans: stored,
    accepted_spans_per_sec: round(accepted / seconds),
    accepted_requests_per_sec: round(run.okPerSec),
    p50_ms: run.p50,
    p99_ms: run.p99,
    non_2xx: run.non2xx,
    errors: run.errors,
    persisted_spans_per_sec: round(stored / endToEndSeconds),
    drain_seconds_after_load: round(endToEndSeconds - acceptedSeconds),
    peak_backlog: Math.max(0, ...watch.samples.map((s) => s.backlog)),
    cpu_seconds: Object.fromEntries(
      Object.entries(cpuAfter).map(([k, v]) => [k, round(v - cpuBefore[k as keyof typeof cpuBefore])]),
    ) as Record<keyof typeof cpuAfter, number>,
    rss_mb: watch.samples,
  };
}

export async function runIngestBenchmark(mode: IngestMode) {
  const path = mode.spansPerRequest === 1 ? '/trace_log' : '/trace_logs/batch';
  const stack = await createBenchStack();
  await stack.start();
  const bare = spawnNode('scripts/bench/lib/bare-fastify.ts', { PORT: String(BARE_PORT) });
  process.once('exit', () => bare.kill('SIGKILL'));
  await waitForHttp(`http://127.0.0.1:${BARE_PORT}/`);
  const spansPer = (r: LoadResult) => r.okPerSec * mode.spansPerRequest;
  const loadAt = (url: string, seconds: number, rate?: number, connections = mode.connections) =>
    load({
      url,
      headers: stack.headers,
      connections,
      durationSec: seconds,
      rate,
      body: jsonBodies(mode.spansPerRequest, tracePool('bench')),
    });

  await warmUp(stack, (seconds) => loadAt(`${stack.base}${path}`, seconds));

  /** One round: both ceilings, then Sightline at its maximum rate until everything accepted is stored. */
  async function measureRound() {
    const bareRun = await loadAt(`http://127.0.0.1:${BARE_PORT}/api/svc/v1${path}`, CEILING_SECONDS);
    const pgSpansPerSec = await directPostgres(stack, CEILING_SECONDS);
    return {
      bare: {
        requests_per_sec: round(bareRun.okPerSec),
        spans_per_sec: round(spansPer(bareRun)),
        p50_ms: bareRun.p50,
        p99_ms: bareRun.p99,
      },
      direct_postgres_spans_per_sec: round(pgSpansPerSec),
      sightline: await atMaxRate(stack, mode.spansPerRequest, (seconds) => loadAt(`${stack.base}${path}`, seconds)),
    };
  }

  const rounds: Awaited<ReturnType<typeof measureRound>>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    rounds.push(await measureRound());
    console.log(
      `round ${r + 1}:`,
      JSON.stringify({ ...rounds.at(-1), sightline: { ...rounds.at(-1)!.sightline, rss_mb: undefined } }),
    );
  }
  bare.kill('SIGTERM');

  const med = (pick: (r: (typeof rounds)[number]) => number) => round(median(rounds.map(pick)));
  const persisted = med((r) => r.sightline.persisted_spans_per_sec);
  const acceptedRate = med((r) => r.sightline.accepted_spans_per_sec);

  // Fixed rates: a quarter and a half of the end-to-end maximum, with a visibility probe every 100 ms at most.
  const fixed = [];
  for (const share of [0.25, 0.5]) {
    const spansPerSec = persisted * share;
    const requestsPerSec = Math.max(1, Math.round(spansPerSec / mode.spansPerRequest));
    const probes = visibilityProbes(stack, 100);
    const run = await loadAt(
      `${stack.base}${path}`,
      FIXED_SECONDS,
      requestsPerSec,
      Math.min(mode.connections, requestsPerSec),
    );
    const lag = await probes.stop();
    await waitForBacklog(stack);
    fixed.push({
      share_of_max: share,
      target_spans_per_sec: round(spansPerSec),
      accepted_spans_per_sec: round(spansPer(run)),
      p50_ms: run.p50,
      p99_ms: run.p99,
      non_2xx: run.non2xx,
      visibility_lag_ms: {
        probes: lag.probes,
        get_trace_log: {
          n: lag.byId.length,
          p50: round(quantile(lag.byId, 0.5)),
          p99: round(quantile(lag.byId, 0.99)),
        },
        get_trace_logs: {
          n: lag.inListing.length,
          p50: round(quantile(lag.inListing, 0.5)),
          p99: round(quantile(lag.inListing, 0.99)),
        },
      },
    });
    console.log('fixed rate:', JSON.stringify(fixed.at(-1)));
  }
  const peak = { api: round(peakRssMb(stack.apiPid)), worker: round(peakRssMb(stack.workerPid)) };
  await stack.stop();
  return { rounds, fixed, peak, persisted, acceptedRate, med };
}

export type IngestRun = Awaited<ReturnType<typeof runIngestBenchmark>>;

/** The summary rows both ingest benchmarks share. */
export function ingestRows(
  run: IngestRun,
  targets: { endToEnd: number; ceilingShare: { of: 'bare' | 'postgres'; share: number } },
): Row[] {
  const { med, fixed, peak } = run;
  const half = fixed.find((f) => f.share_of_max === 0.5)!;
  const ceiling =
    targets.ceilingShare.of === 'bare' ? med((r) => r.bare.spans_per_sec) : med((r) => r.direct_postgres_spans_per_sec);
  const share = median(
    run.rounds.map((r) =>
      targets.ceilingShare.of === 'bare'
        ? r.sightline.accepted_spans_per_sec / r.bare.spans_per_sec
        : r.sightline.persisted_spans_per_sec / r.direct_postgres_spans_per_sec,
    ),
  );
  return [
    { figure: 'accepted spans/s at maximum rate', value: String(run.acceptedRate) },
    {
      figure: 'accept latency p50 / p99 (ms)',
      value: `${med((r) => r.sightline.p50_ms)} / ${med((r) => r.sightline.p99_ms)}`,
    },
    {
      figure: 'persisted spans/s, end to end',
      value: String(run.persisted),
      target: `≥ ${targets.endToEnd}`,
      met: run.persisted >= targets.endToEnd,
    },
    { figure: 'bare Fastify ceiling, spans/s', value: String(med((r) => r.bare.spans_per_sec)) },
    { figure: 'direct PostgreSQL upsert ceiling, spans/s', value: String(med((r) => r.direct_postgres_spans_per_sec)) },
    {
      figure:
        targets.ceilingShare.of === 'bare'
          ? 'accepted / bare-Fastify ceiling'
          : 'end to end / direct-PostgreSQL ceiling',
      value: `${round(share * 100)}% (of ${ceiling})`,
      target: `≥ ${targets.ceilingShare.share * 100}%`,
      met: share >= targets.ceilingShare.share,
    },
    {
      figure: `visibility lag p50 / p99 at about half the end-to-end maximum (${half.accepted_spans_per_sec} spans/s sent), GET /trace_log/{id} (ms)`,
      value: `${half.visibility_lag_ms.get_trace_log.p50} / ${half.visibility_lag_ms.get_trace_log.p99}`,
      target: 'p99 ≤ 250',
      met: half.visibility_lag_ms.get_trace_log.p99 <= 250,
    },
    {
      figure: 'visibility lag p50 / p99 at the same rate, get_trace_logs (ms)',
      value: `${half.visibility_lag_ms.get_trace_logs.p50} / ${half.visibility_lag_ms.get_trace_logs.p99}`,
      target: 'p99 ≤ 250',
      met: half.visibility_lag_ms.get_trace_logs.p99 <= 250,
    },
    {
      figure: 'peak RSS API / worker (MB)',
      value: `${peak.api} / ${peak.worker}`,
      target: 'API ≤ 300',
      met: peak.api <= 300,
    },
  ];
}
