// Monitors at scale: MONITORS monitors over a project of BENCH_MONITOR_TRACES traces of 5 spans (seeded
// straight into PostgreSQL; 200,000 traces are 1M spans over 30 days), evaluated by the real worker's
// scheduler. The figure is how long one run of the scheduler takes to read every monitor and record its
// state (target: within the 60 s interval), beside its floor: the same metric statements alone, run from
// this process with the same concurrency in the same round.
import { QueueEvents } from 'bullmq';
import { createMonitor, enabledMonitors, getOrCreateProject, metricSeries, type MonitorFields } from '@sightline/db';
import type { MonitorMetric } from '@sightline/schemas';
import { median, round, writeResult, type Row } from './lib/report';
import { seedTraces } from './lib/seed';
import { createBenchStack, freePort } from './lib/stack';

const TRACES = Number(process.env.BENCH_MONITOR_TRACES ?? 200_000);
const MONITORS = Number(process.env.BENCH_MONITORS ?? 1000);
const ROUNDS = 3;
/** As the scheduler runs them: four monitors read at once. */
const CONCURRENCY = 4;
const INTERVAL_SECONDS = 5;

const stack = await createBenchStack({
  port: await freePort(),
  workerEnv: { MONITOR_INTERVAL_SECONDS: String(INTERVAL_SECONDS) },
});
const { uuid: projectId } = await getOrCreateProject(stack.sql, stack.organizationId, 'watched');
console.log(`seeding ${TRACES} traces (${TRACES * 5} spans)`);
await seedTraces(stack.sql, { organizationId: stack.organizationId, projectId, traces: TRACES });
await stack.sql`analyze spans`;

// Every metric and condition, windows from 5 minutes to 4 hours, one monitor in three filtered on
// metadata, one in five an anomaly against the previous week (8 windows read instead of 1).
const METRICS: MonitorMetric[] = [
  'error_rate',
  'latency_p50',
  'latency_p95',
  'latency_p99',
  'cost',
  'tokens',
  'trace_count',
  'score_mean',
];
const WINDOWS = [5, 15, 60, 240];
for (let i = 0; i < MONITORS; i++) {
  const metric = METRICS[i % METRICS.length]!;
  const fields: MonitorFields = {
    name: `monitor-${i}`,
    metric,
    score_name: metric === 'score_mean' ? 'accuracy' : null,
    filters: i % 3 === 0 ? [{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }] : [],
    window_minutes: WINDOWS[i % WINDOWS.length]!,
    condition: i % 5 === 0 ? { anomaly: { mads: 3 } } : { above: 1e9 },
    min_samples: 1,
    channels: [],
    enabled: true,
  };
  await createMonitor(stack.sql, stack.organizationId, projectId, fields);
}
const monitors = await enabledMonitors(stack.sql);

/** The floor: each monitor's metric statement (8 windows for an anomaly), four at a time, nothing else. */
async function floor(): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (let m = monitors[next++]; m; m = monitors[next++])
      await metricSeries(
        stack.sql,
        m,
        'anomaly' in m.condition ? [0, 1, 2, 3, 4, 5, 6, 7].map((d) => d * 86_400) : [0],
      );
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (performance.now() - t0) / 1000;
}

// Each run of the scheduler, timed from its job becoming active to its completion.
const events = new QueueEvents('monitor-evaluate', {
  connection: stack.redis.duplicate({ maxRetriesPerRequest: null }),
  prefix: stack.prefix,
});
await events.waitUntilReady();
const runs: number[] = [];
const active = new Map<string, number>();
events.on('active', ({ jobId }) => active.set(jobId, performance.now()));
events.on('completed', ({ jobId }) => {
  const t = active.get(jobId);
  if (t !== undefined) runs.push((performance.now() - t) / 1000);
});
await stack.start();

const rounds = [];
for (let r = 1; r <= ROUNDS; r++) {
  const seen = runs.length;
  while (runs.length <= seen) await new Promise((res) => setTimeout(res, 100));
  const run = runs.at(-1)!;
  const floorSeconds = await floor();
  const [states] = await stack.sql<{ evaluated: number }[]>`
    select count(*)::int as evaluated from monitors where last_evaluated_at is not null`;
  rounds.push({
    run_seconds: round(run, 2),
    floor_seconds: round(floorSeconds, 2),
    ratio_to_floor: round(run / floorSeconds, 2),
    evaluated: states!.evaluated,
  });
  console.log(`round ${r}`, rounds.at(-1));
}
await events.close();
await stack.stop();

const spread = (xs: number[]) => `${Math.min(...xs)}–${Math.max(...xs)}`;
const runSeconds = rounds.map((r) => r.run_seconds);
const summary: Row[] = [
  {
    figure: `one scheduler run over ${MONITORS} monitors (1 in 5 an anomaly) on ${TRACES * 5} spans (s, median of ${ROUNDS}; spread)`,
    value: `${median(runSeconds)} (${spread(runSeconds)})`,
    target: '≤ 60 (the interval)',
    met: Math.max(...runSeconds) <= 60,
  },
  {
    figure: 'floor: the same metric statements alone, 4 at a time (s, median; spread)',
    value: `${median(rounds.map((r) => r.floor_seconds))} (${spread(rounds.map((r) => r.floor_seconds))})`,
  },
  {
    figure: 'run over the floor of its round (ratio, median; spread)',
    value: `${median(rounds.map((r) => r.ratio_to_floor))} (${spread(rounds.map((r) => r.ratio_to_floor))})`,
  },
];
writeResult({ benchmark: 'monitors', summary, rounds, monitors: MONITORS, spans: TRACES * 5 });
