// The figures read rather than observed: process metrics, jobs' timings from their worker's events, and the
// gauges read at scrape time from what is registered with them (queues, provider lanes, database pools). Apart
// from metric-definitions.ts because each starts listening or reading for a process that asks it to.
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { collectDefaultMetrics, Gauge } from 'prom-client';
import { jobDurationSeconds, jobWaitSeconds, metrics, stalledJobs } from './metric-definitions';

let processMetricsOn = false;
/** prom-client's process metrics (CPU, memory, event-loop delay, GC, handles), once per process. */
export function collectProcessMetrics(): void {
  if (processMetricsOn) return;
  processMetricsOn = true;
  collectDefaultMetrics({ register: metrics });
}

/** Records wait, duration and stalls of a BullMQ worker's jobs. */
export function observeWorker(worker: Worker): void {
  const queue = worker.name;
  // Present at 0 from the start, so that an alert on its rate sees the series before the first stall.
  stalledJobs.inc({ queue }, 0);
  worker.on('active', (job) => {
    if (job.attemptsMade === 0 && job.processedOn)
      jobWaitSeconds.observe({ queue }, Math.max(0, job.processedOn - job.timestamp - (job.delay || 0)) / 1000);
  });
  const finished = (outcome: string) => (job: { processedOn?: number } | undefined) => {
    if (job?.processedOn)
      jobDurationSeconds.observe({ queue, outcome }, Math.max(0, Date.now() - job.processedOn) / 1000);
  };
  worker.on('completed', finished('completed'));
  worker.on('failed', finished('failed'));
  worker.on('stalled', () => stalledJobs.inc({ queue }));
}

// A scrape waits on Redis for the queue and lane readings. One that has not come within this long counts as
// none, as when Redis is unreachable: the worker's connection waits out an outage rather than failing, and a
// scrape it held would also hold the cluster's gathering (which gives up after 5 s) and fail every figure.
const READING_TIMEOUT_MS = 3000;

/** The readings, or none when they fail or do not come within READING_TIMEOUT_MS. */
function readingWithin<T>(reading: Promise<T[]>): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T[]>((resolve) => (timer = setTimeout(() => resolve([]), READING_TIMEOUT_MS)));
  return Promise.race([reading.catch(() => []), late]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------------------
// Queues, read from Redis at scrape time.

const COUNTED_STATES = ['waiting', 'prioritized', 'delayed', 'active', 'failed'] as const;
// Jobs that no worker has taken yet (a paused queue keeps them in its waiting list); delayed ones include
// retries waiting out their backoff.
const DEPTH_STATES = new Set<string>(['waiting', 'prioritized', 'delayed']);
/** Jobs not started yet: waiting, prioritized and delayed. */
const depthOf = (counts: Record<string, number>) =>
  Object.entries(counts).reduce((sum, [state, n]) => sum + (DEPTH_STATES.has(state) ? n : 0), 0);

/** `shard`: the queue's place among the source's queues of its name (the span-write shards share one). */
type QueueReading = { name: string; shard: number; counts: Record<string, number>; oldestWaitingSeconds: number };
type QueueSource = { read(): Promise<QueueReading[]> };
const queueSources = new Set<QueueSource>();

/** Each queue's state, or none while Redis is unreachable: the rest of the metrics are still served. */
const readEachQueue = async () =>
  (await Promise.all([...queueSources].map((source) => readingWithin(source.read())))).flat();

/** The queues' state by name: the span-write shards' queues share one, and count as one queue. */
async function readQueues(): Promise<QueueReading[]> {
  const byName = new Map<string, QueueReading>();
  for (const reading of await readEachQueue()) {
    const seen = byName.get(reading.name);
    if (!seen) byName.set(reading.name, { ...reading, counts: { ...reading.counts } });
    else {
      for (const [state, n] of Object.entries(reading.counts)) seen.counts[state] = (seen.counts[state] ?? 0) + n;
      seen.oldestWaitingSeconds = Math.max(seen.oldestWaitingSeconds, reading.oldestWaitingSeconds);
    }
  }
  return [...byName.values()];
}

/**
 * A gauge of the queues, set at each scrape (collect) by `fill` from the sources registered with it. Read
 * from Redis, its values are the same in every process.
 */
function queueGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  fill: (set: (labels: Record<L, string>, value: number) => void) => Promise<void>,
) {
  new Gauge({
    name,
    help,
    labelNames,
    aggregator: 'first',
    registers: [metrics],
    async collect() {
      this.reset();
      await fill((labels, value) => this.set(labels, value));
    },
  });
}

queueGauge(
  'sightline_queue_jobs',
  'Jobs in each queue by state (waiting, prioritized, delayed, active, failed), read from Redis',
  ['queue', 'state'],
  async (set) => {
    for (const q of await readQueues())
      for (const [state, n] of Object.entries(q.counts)) set({ queue: q.name, state }, n);
  },
);

queueGauge(
  'sightline_queue_depth',
  'Jobs not started yet in each queue: waiting + prioritized + delayed (retries in their backoff too)',
  ['queue'],
  async (set) => {
    for (const q of await readQueues()) set({ queue: q.name }, depthOf(q.counts));
  },
);

queueGauge(
  'sightline_queue_oldest_waiting_seconds',
  'Age of the oldest job in the waiting list of each queue (0 when empty), from when it was added or its delay ended: how far the queue is behind',
  ['queue'],
  async (set) => {
    for (const q of await readQueues()) set({ queue: q.name }, q.oldestWaitingSeconds);
  },
);

queueGauge(
  'sightline_queue_shard_depth',
  'Jobs not started yet in each shard of a sharded queue (the span writes, SPAN_WRITE_SHARDS > 1): a shard behind the others is a master behind the others',
  ['queue', 'shard'],
  async (set) => {
    const readings = await readEachQueue();
    const sharded = new Set(readings.filter((q) => q.shard > 0).map((q) => q.name));
    for (const q of readings.filter((r) => sharded.has(r.name)))
      set({ queue: q.name, shard: String(q.shard) }, depthOf(q.counts));
  },
);

/**
 * Serves the counts and waiting age of these queues at every scrape. One reading is shared by the gauges
 * and by scrapes within `cacheMs`, so scrapes cannot hammer Redis. `redis` is the connection the queues
 * use; it reads one field of the oldest waiting job (its whole data can be megabytes).
 */
export function watchQueues(queues: Queue[], redis: Redis, { cacheMs = 2000 } = {}): () => void {
  let cached: { at: number; reading: Promise<QueueReading[]> } | null = null;
  const shardOf = queues.map((queue, i) => queues.slice(0, i).filter((q) => q.name === queue.name).length);
  const readNow = () =>
    Promise.all(
      queues.map(async (queue, i): Promise<QueueReading> => {
        const [counts, [oldestId]] = await Promise.all([
          queue.getJobCounts(...COUNTED_STATES),
          queue.getRanges(['wait'], 0, 0, true),
        ]);
        const [addedAt, delay] = oldestId ? await redis.hmget(queue.toKey(oldestId), 'timestamp', 'delay') : [];
        const readyAt = Number(addedAt) + (Number(delay) || 0);
        return {
          name: queue.name,
          shard: shardOf[i]!,
          counts,
          oldestWaitingSeconds: addedAt && Number.isFinite(readyAt) ? Math.max(0, Date.now() - readyAt) / 1000 : 0,
        };
      }),
    );
  const source: QueueSource = {
    read() {
      if (!cached || Date.now() - cached.at > cacheMs) {
        const reading = readNow();
        cached = { at: Date.now(), reading };
        // A failed reading (Redis away) is not kept: the next scrape tries again.
        reading.catch(() => {
          if (cached?.reading === reading) cached = null;
        });
      }
      return cached.reading;
    },
  };
  queueSources.add(source);
  return () => void queueSources.delete(source);
}

// ---------------------------------------------------------------------------------------------------------
// Providers' lanes, read from Redis at scrape time.

type LaneReading = { provider: string; waiting: number; active: number };
let laneSource: (() => Promise<LaneReading[]>) | null = null;

new Gauge({
  name: 'sightline_provider_queued',
  aggregator: 'first', // read from Redis: the same in every process
  help: "Completions in their provider's lane, read from Redis: waiting for its limit or its pause, or being called",
  labelNames: ['provider', 'state'] as const,
  registers: [metrics],
  async collect() {
    this.reset();
    const readings = laneSource ? await readingWithin(laneSource()) : [];
    for (const { provider, waiting, active } of readings) {
      this.inc({ provider, state: 'waiting' }, waiting);
      this.inc({ provider, state: 'active' }, active);
    }
  },
});

/** Serves the lanes' counts (read when scraped) on `sightline_provider_queued`. */
export function watchLanes(read: () => Promise<LaneReading[]>): () => void {
  laneSource = read;
  return () => void (laneSource = null);
}

// ---------------------------------------------------------------------------------------------------------
// Database pools, read in this process at scrape time.

export type PoolReading = { maxConnections: number; inFlight: number };
const pools = new Map<string, () => PoolReading>();

/** A gauge of one figure of every watched pool, read at scrape time. */
const poolGauge = (name: string, help: string, figure: keyof PoolReading) =>
  new Gauge({
    name,
    help,
    labelNames: ['pool'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const [pool, read] of pools) this.set({ pool }, read()[figure]);
    },
  });
poolGauge('sightline_db_pool_max_connections', 'Connections the PostgreSQL pool may open', 'maxConnections');
poolGauge(
  'sightline_db_pool_in_flight',
  'Queries and transactions sent through the pool and not answered yet; above max connections, the rest wait in the pool queue',
  'inFlight',
);

/** Serves a pool's figures under `name` (one pool per name: a later one replaces it). */
export function watchPool(name: string, read: () => PoolReading): () => void {
  pools.set(name, read);
  return () => {
    if (pools.get(name) === read) pools.delete(name);
  };
}
