import cluster from 'node:cluster';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every Sightline metric, defined once for both processes: an API node and a worker each serve their own
 * copy of this registry (API: GET /metrics; worker: METRICS_PORT), filled with what that process observes.
 */
export const metrics = new Registry();

let processMetricsOn = false;
/** prom-client's process metrics (CPU, memory, event-loop delay, GC, handles), once per process. */
export function collectProcessMetrics(): void {
  if (processMetricsOn) return;
  processMetricsOn = true;
  collectDefaultMetrics({ register: metrics });
}

export const httpRequestDuration = new Histogram({
  name: 'sightline_http_request_duration_seconds',
  help: 'HTTP request latency by route pattern (never the raw URL), method and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metrics],
});

const EVENT_COUNT_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

export const spanWriteJobEvents = new Histogram({
  name: 'sightline_span_write_job_events',
  help: 'Span events per span-write job as the intake coalesces them (the requests that arrive together share one job)',
  buckets: EVENT_COUNT_BUCKETS,
  registers: [metrics],
});

export const spanWriteTransactionEvents = new Histogram({
  name: 'sightline_span_write_transaction_events',
  help: 'Span events written per worker transaction (at most SPAN_BATCH_SIZE)',
  buckets: EVENT_COUNT_BUCKETS,
  registers: [metrics],
});

// ---------------------------------------------------------------------------------------------------------
// Jobs, as the worker that runs them sees them.

const jobWaitSeconds = new Histogram({
  name: 'sightline_job_wait_seconds',
  help: 'Time from enqueue (or from the end of its delay, for a scheduled job) to the first start of a job; retries are not counted again',
  labelNames: ['queue'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metrics],
});

const jobDurationSeconds = new Histogram({
  name: 'sightline_job_duration_seconds',
  help: 'Time a worker spent on one attempt of a job, by outcome (a failed attempt may be retried)',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metrics],
});

const stalledJobs = new Counter({
  name: 'sightline_queue_stalled_jobs_total',
  help: 'Jobs this worker process found stalled (their worker stopped renewing the lock) and put back or failed',
  labelNames: ['queue'] as const,
  registers: [metrics],
});

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

// ---------------------------------------------------------------------------------------------------------
// Queues, read from Redis at scrape time.

const COUNTED_STATES = ['waiting', 'prioritized', 'delayed', 'active', 'failed'] as const;
// Jobs that no worker has taken yet (a paused queue keeps them in its waiting list); delayed ones include
// retries waiting out their backoff.
const DEPTH_STATES = new Set<string>(['waiting', 'prioritized', 'delayed']);

type QueueReading = { name: string; counts: Record<string, number>; oldestWaitingSeconds: number };
type QueueSource = { read(): Promise<QueueReading[]> };
const queueSources = new Set<QueueSource>();

/** The queues' state, or none while Redis is unreachable: the rest of the metrics are still served. */
async function readQueues(): Promise<QueueReading[]> {
  const readings = await Promise.all([...queueSources].map((source) => source.read().catch(() => [])));
  return readings.flat();
}

// The gauges below are read when scraped (collect), from the sources registered with them.
new Gauge({
  name: 'sightline_queue_jobs',
  aggregator: 'first', // read from Redis: the same in every process
  help: 'Jobs in each queue by state (waiting, prioritized, delayed, active, failed), read from Redis',
  labelNames: ['queue', 'state'] as const,
  registers: [metrics],
  async collect() {
    this.reset();
    for (const q of await readQueues())
      for (const [state, n] of Object.entries(q.counts)) this.set({ queue: q.name, state }, n);
  },
});

new Gauge({
  name: 'sightline_queue_depth',
  aggregator: 'first', // read from Redis: the same in every process
  help: 'Jobs not started yet in each queue: waiting + prioritized + delayed (retries in their backoff too)',
  labelNames: ['queue'] as const,
  registers: [metrics],
  async collect() {
    this.reset();
    for (const q of await readQueues()) {
      this.set(
        { queue: q.name },
        Object.entries(q.counts).reduce((sum, [state, n]) => sum + (DEPTH_STATES.has(state) ? n : 0), 0),
      );
    }
  },
});

new Gauge({
  name: 'sightline_queue_oldest_waiting_seconds',
  aggregator: 'first', // read from Redis: the same in every process
  help: 'Age of the oldest job in the waiting list of each queue (0 when empty), from when it was added or its delay ended: how far the queue is behind',
  labelNames: ['queue'] as const,
  registers: [metrics],
  async collect() {
    this.reset();
    for (const q of await readQueues()) this.set({ queue: q.name }, q.oldestWaitingSeconds);
  },
});

/**
 * Serves the counts and waiting age of these queues at every scrape. One reading is shared by the gauges
 * and by scrapes within `cacheMs`, so scrapes cannot hammer Redis. `redis` is the connection the queues
 * use; it reads one field of the oldest waiting job (its whole data can be megabytes).
 */
export function watchQueues(queues: Queue[], redis: Redis, { cacheMs = 2000 } = {}): () => void {
  let cached: { at: number; reading: Promise<QueueReading[]> } | null = null;
  const readNow = () =>
    Promise.all(
      queues.map(async (queue): Promise<QueueReading> => {
        const [counts, [oldestId]] = await Promise.all([
          queue.getJobCounts(...COUNTED_STATES),
          queue.getRanges(['wait'], 0, 0, true),
        ]);
        const [addedAt, delay] = oldestId ? await redis.hmget(queue.toKey(oldestId), 'timestamp', 'delay') : [];
        const readyAt = Number(addedAt) + (Number(delay) || 0);
        return {
          name: queue.name,
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
// Providers, as the gateway calls them (see the worker's lanes.ts).

export const providerCallsInFlight = new Gauge({
  name: 'sightline_provider_calls_in_flight',
  help: 'Provider calls this worker process is making now',
  labelNames: ['provider'] as const,
  registers: [metrics],
});

export const providerOverloads = new Counter({
  name: 'sightline_provider_overloads_total',
  help: 'Calls a provider refused for overload (429, 503, 529) that the gateway queued again or answered, by status',
  labelNames: ['provider', 'status'] as const,
  registers: [metrics],
});

export const providerLimitWaitSeconds = new Counter({
  name: 'sightline_provider_limit_wait_seconds_total',
  help: "Time completions spent queued in their provider's lane (its limits, its pause after an overload) before the call that went",
  labelNames: ['provider'] as const,
  registers: [metrics],
});

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
    const readings = laneSource ? await laneSource().catch(() => []) : [];
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
// Database pools.

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

// ---------------------------------------------------------------------------------------------------------

/** A bare HTTP server answering `GET /metrics` with this process's metrics (the worker has no Fastify). */
export function serveMetrics(port: number, log: Logger): { listening: Promise<number>; close(): Promise<void> } {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    metrics.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (err: Error) => {
        log.error({ err }, 'metrics collection failed');
        res.writeHead(500).end();
      },
    );
  });
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve((server.address() as AddressInfo).port));
  });
  listening.then(
    (bound) => log.info({ port: bound }, 'metrics served at /metrics'),
    (err: Error) => log.error({ err: err.message, port }, 'metrics server could not listen'),
  );
  return {
    listening,
    close: () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
  };
}

// ---------------------------------------------------------------------------------------------------------
// API processes in a cluster (`npm start` with API_PROCESSES > 1) share one port, so a scrape lands on any
// one of them. That one asks the primary, which gathers every API process's registry with prom-client's
// AggregatorRegistry (counters and histograms summed; the gauges read from Redis taken once) and answers.

const CLUSTER_METRICS = 'sightline:cluster-metrics';
type ClusterMetricsMessage = { type: typeof CLUSTER_METRICS; id: number; text?: string; error?: string };
const isClusterMetrics = (message: unknown): message is ClusterMetricsMessage =>
  (message as ClusterMetricsMessage | null)?.type === CLUSTER_METRICS;

/** In the cluster's primary: answers its API processes' requests for everyone's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isClusterMetrics(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: CLUSTER_METRICS, id: message.id, text }),
      (err: Error) => worker.send({ type: CLUSTER_METRICS, id: message.id, error: err.message }),
    );
  });
}

// Only under our own primary (`npm start` sets this): another cluster manager would never answer.
const fromPrimary = cluster.isWorker && process.env.SIGHTLINE_METRICS_FROM_PRIMARY === '1';
const asked = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
let lastAsk = 0;
if (fromPrimary) {
  AggregatorRegistry.setRegistries([metrics]);
  new AggregatorRegistry(); // installs prom-client's answer to the primary's requests
  process.on('message', (message: unknown) => {
    if (!isClusterMetrics(message)) return;
    const ask = asked.get(message.id);
    asked.delete(message.id);
    if (message.text !== undefined) ask?.resolve(message.text);
    else ask?.reject(new Error(`cluster metrics: ${message.error}`));
  });
}

/** Why a scrape has no metrics to serve: the cluster's primary did not answer. */
export class ClusterMetricsUnavailable extends Error {}

const PRIMARY_TIMEOUT_MS = 5000;

/**
 * The metrics to serve: this process's, or under `npm start`'s cluster, every API process's together. A
 * primary that does not answer in time (busy, or gone) fails the scrape with ClusterMetricsUnavailable
 * rather than holding it: this process's figures alone would read as counters reset to a fraction.
 */
export function metricsText(timeoutMs = PRIMARY_TIMEOUT_MS): Promise<string> {
  if (!fromPrimary) return metrics.metrics();
  const id = ++lastAsk;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      asked.delete(id);
      clearTimeout(timer);
      reject(new ClusterMetricsUnavailable(`cluster metrics: ${why}`));
    };
    const timer = setTimeout(() => fail(`the primary did not answer within ${timeoutMs} ms`), timeoutMs);
    asked.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (err) => (clearTimeout(timer), reject(err)),
    });
    process.send!({ type: CLUSTER_METRICS, id }, undefined, {}, (err) => err && fail(err.message));
  });
}
