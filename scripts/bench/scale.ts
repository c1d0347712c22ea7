// Scaling out on one machine: single-span ingest (`POST /trace_log`, 64 connections) at its maximum rate
// with 1, 2 and 4 worker processes and 1 and 2 API processes (run as `npm start` runs them). On 2 cores
// the rate cannot grow much; what this shows is the CPU each process spends per stored span, and that
// nothing collapses as processes are added: no lock waits in PostgreSQL, no job run twice (the events the
// workers wrote equal the events accepted), no span lost or duplicated.
//
// A configuration ending in `:cluster` (SCALE_CONFIGS=1x2,1x2:cluster) runs against a Redis Cluster of
// its own (3 masters, 3 replicas) with SPAN_WRITE_SHARDS=3, and counts the commands each master ran per
// stored span, against those of the machine's one Redis in the same rounds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandsRun, PrivateRedisCluster } from '../../test/support/private-services';
import { freePort } from './lib/stack';
import { atMaxRate, cpuSeconds, jsonBodies, ROUNDS, warmUp } from './lib/ingest';
import { load } from './lib/load';
import { median, round, writeResult, type Row } from './lib/report';
import { createBenchStack, type BenchStack } from './lib/stack';
import { tracePool } from './lib/spans';

const SECONDS = Number(process.env.SCALE_SECONDS ?? 20);
// SCALE_CONFIGS=1x1,2x2 (API processes x worker processes) picks others.
const CONFIGS = (process.env.SCALE_CONFIGS ?? '1x1,1x2,1x4,2x1,2x2').split(',').map((c) => {
  const [processes, engine] = c.split(':');
  const [api, workers] = processes.split('x').map(Number);
  return { api, workers, cluster: engine === 'cluster' };
});
type Config = (typeof CONFIGS)[number];
const label = (c: Config) =>
  `${c.api} API × ${c.workers} worker${c.workers > 1 ? 's' : ''}${c.cluster ? ', 3-master cluster' : ''}`;

const MACHINE_REDIS_PORT = Number(new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379);
const clusterDir = CONFIGS.some((c) => c.cluster) ? mkdtempSync(join(tmpdir(), 'sightline-bench-cluster-')) : null;
const cluster = clusterDir ? await PrivateRedisCluster.create(clusterDir) : null;

/** The ports of the Redis masters a configuration writes to: the cluster's, or the machine's one Redis. */
async function masterPorts(config: Config): Promise<number[]> {
  return config.cluster ? cluster!.masterPorts() : [MACHINE_REDIS_PORT];
}

/** Span events the workers' transactions wrote so far, and their transactions, summed over their metrics. */
async function transactions(metricsPort: number, workers: number): Promise<{ events: number; count: number }> {
  const total = { events: 0, count: 0 };
  for (let n = 0; n < workers; n++) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort + n}/metrics`)).text();
    total.events += Number(/^sightline_span_write_transaction_events_sum (\S+)$/m.exec(text)?.[1] ?? 0);
    total.count += Number(/^sightline_span_write_transaction_events_count (\S+)$/m.exec(text)?.[1] ?? 0);
  }
  return total;
}

/** Samples, every 250 ms, the benchmark database's backends waiting for a lock, by what they wait for. */
function lockWaits(stack: BenchStack) {
  const samples: number[] = [];
  const byEvent: Record<string, number> = {};
  let running = true;
  const done = (async () => {
    while (running) {
      const waiting = await stack.sql<{ event: string }[]>`
        select wait_event as event from pg_stat_activity where datname = ${stack.database} and wait_event_type = 'Lock'`;
      samples.push(waiting.length);
      for (const { event } of waiting) byEvent[event] = (byEvent[event] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return {
        samples: samples.length,
        with_waits: samples.filter((n) => n > 0).length,
        max: Math.max(0, ...samples),
        by_event: byEvent,
      };
    },
  };
}

async function measure(config: Config) {
  const metricsPort = await freePort();
  const stack = await createBenchStack({
    apiProcesses: config.api,
    workerProcesses: config.workers,
    workerMetricsPort: metricsPort,
    ...(config.cluster && { redisCluster: { nodes: cluster!.nodeList, spanWriteShards: 3 } }),
  });
  await stack.start();
  const send = (seconds: number) =>
    load({
      url: `${stack.base}/trace_log`,
      headers: stack.headers,
      connections: 64,
      durationSec: seconds,
      body: jsonBodies(1, tracePool('bench')),
    });
  await warmUp(stack, send);
  const pids = { api: stack.apiPids(), primary: config.api > 1 ? [stack.apiPid] : [], workers: stack.workerPids() };
  const cpuOf = () => ({
    api: pids.api.map((p) => cpuSeconds([p])),
    primary: cpuSeconds(pids.primary),
    workers: pids.workers.map((p) => cpuSeconds([p])),
  });
  const masters = await masterPorts(config);
  const [cpuBefore, before, commandsBefore] = [
    cpuOf(),
    await transactions(metricsPort, config.workers),
    await commandsRun(masters),
  ];
  const locks = lockWaits(stack);
  const run = await atMaxRate(stack, 1, send, SECONDS);
  const [cpuAfter, after, commandsAfter] = [
    cpuOf(),
    await transactions(metricsPort, config.workers),
    await commandsRun(masters),
  ];
  const waits = await locks.stop();
  const [{ deadlocks }] = await stack.sql<{ deadlocks: number }[]>`
    select deadlocks::int from pg_stat_database where datname = ${stack.database}`;
  await stack.stop();
  const perSpanMs = (cpu: number) => round((cpu / run.stored_spans) * 1000, 3);
  return {
    config: label(config),
    persisted_spans_per_sec: run.persisted_spans_per_sec,
    accepted_spans: run.accepted_spans,
    stored_spans: run.stored_spans,
    // More than stored would mean work done twice (a redelivery, two workers on one job).
    events_written_by_workers: after.events - before.events,
    events_per_transaction: round((after.events - before.events) / Math.max(1, after.count - before.count)),
    lock_waits: { ...waits, deadlocks },
    // Over the round: the load's commands, and the sampler's and the workers' own.
    redis_commands_per_span_each_master: commandsAfter.map((n, i) =>
      round((n - commandsBefore[i]) / run.stored_spans, 2),
    ),
    cpu_ms_per_span: {
      api_each: cpuAfter.api.map((c, i) => perSpanMs(c - cpuBefore.api[i])),
      ...(config.api > 1 && { cluster_primary: perSpanMs(cpuAfter.primary - cpuBefore.primary) }),
      worker_each: cpuAfter.workers.map((c, i) => perSpanMs(c - cpuBefore.workers[i])),
      api: perSpanMs(run.cpu_seconds.api),
      worker: perSpanMs(run.cpu_seconds.worker),
      postgres: perSpanMs(run.cpu_seconds.postgres),
      redis: perSpanMs(run.cpu_seconds.redis),
      loadgen: perSpanMs(run.cpu_seconds.loadgen),
    },
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;
const results = new Map<string, Measured[]>(CONFIGS.map((c) => [label(c), []]));
for (let r = 0; r < ROUNDS; r++) {
  // A rotating order, so that the machine's drift falls on every configuration alike.
  for (let k = 0; k < CONFIGS.length; k++) {
    const config = CONFIGS[(k + r) % CONFIGS.length];
    const m = await measure(config);
    results.get(label(config))!.push(m);
    console.log(`round ${r + 1}:`, JSON.stringify(m));
  }
}

const service = (m: Measured) =>
  m.cpu_ms_per_span.api + m.cpu_ms_per_span.worker + m.cpu_ms_per_span.postgres + m.cpu_ms_per_span.redis;
const spread = (xs: number[]) => `${round(median(xs), 3)} (${round(Math.min(...xs), 3)}–${round(Math.max(...xs), 3)})`;
const summary: Row[] = [...results].flatMap(([config, ms]) => [
  { figure: `${config}: persisted spans/s`, value: spread(ms.map((m) => m.persisted_spans_per_sec)) },
  {
    figure: `${config}: CPU ms per span, API / worker / PostgreSQL / Redis`,
    value: (['api', 'worker', 'postgres', 'redis'] as const)
      .map((k) => round(median(ms.map((m) => m.cpu_ms_per_span[k])), 3))
      .join(' / '),
  },
  { figure: `${config}: service CPU ms per span`, value: spread(ms.map(service)) },
  { figure: `${config}: span events per worker transaction`, value: spread(ms.map((m) => m.events_per_transaction)) },
  {
    figure: `${config}: Redis commands per span, on each master`,
    value: ms[0].redis_commands_per_span_each_master
      .map((_, i) => round(median(ms.map((m) => m.redis_commands_per_span_each_master[i])), 2))
      .join(' / '),
  },
  {
    // Stored may pass accepted by the requests in flight when the load generator stopped (their 200s
    // arrived after it stopped counting); every span id is new, so a duplicate would be a second row.
    figure: `${config}: spans lost / span events written twice`,
    value: `${ms.reduce((n, m) => n + Math.max(0, m.accepted_spans - m.stored_spans), 0)} / ${ms.reduce((n, m) => n + Math.max(0, m.events_written_by_workers - m.stored_spans), 0)}`,
    target: '0 / 0',
    met: ms.every((m) => m.stored_spans >= m.accepted_spans && m.events_written_by_workers === m.stored_spans),
  },
  {
    figure: `${config}: lock-wait samples / deadlocks`,
    value: `${ms.reduce((n, m) => n + m.lock_waits.with_waits, 0)} of ${ms.reduce((n, m) => n + m.lock_waits.samples, 0)} / ${ms.reduce((n, m) => n + m.lock_waits.deadlocks, 0)}`,
  },
]);
// Against a cluster, its figures are kept apart from the one-Redis configurations'.
writeResult({ benchmark: cluster ? 'scale-cluster' : 'scale', summary, rounds: Object.fromEntries(results) });
await cluster?.stop();
if (clusterDir) rmSync(clusterDir, { recursive: true, force: true });
process.exit(0);
