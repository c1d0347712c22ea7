// The metrics that code observes as things happen (requests, span writes, jobs, provider calls), and the registry
// that holds them. Apart so that observing one needs no sampler and no server, and defining one starts nothing.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every Sightline metric, defined once for both processes: an API node and a worker each serve their own
 * copy of this registry (API: GET /metrics; worker: METRICS_PORT), filled with what that process observes.
 */
export const metrics = new Registry();

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
// Jobs, as the worker that runs them sees them (observeWorker, in metric-samplers.ts, fills them).

export const jobWaitSeconds = new Histogram({
  name: 'sightline_job_wait_seconds',
  help: 'Time from enqueue (or from the end of its delay, for a scheduled job) to the first start of a job; retries are not counted again',
  labelNames: ['queue'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metrics],
});

export const jobDurationSeconds = new Histogram({
  name: 'sightline_job_duration_seconds',
  help: 'Time a worker spent on one attempt of a job, by outcome (a failed attempt may be retried)',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metrics],
});

export const stalledJobs = new Counter({
  name: 'sightline_queue_stalled_jobs_total',
  help: 'Jobs this worker process found stalled (their worker stopped renewing the lock) and put back or failed',
  labelNames: ['queue'] as const,
  registers: [metrics],
});

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

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL replicas, as each process's reads see them (replica-reads.ts): `reads` is console (an API node)
// or monitors (a worker), which measure them apart.

export const replicaLagSeconds = new Gauge({
  name: 'sightline_db_replica_lag_seconds',
  help: 'How long ago the primary first held WAL this replica has not replayed (0: caught up); -1 while it cannot be read',
  labelNames: ['reads', 'replica'] as const,
  registers: [metrics],
});

export const replicaServing = new Gauge({
  name: 'sightline_db_replica_serving',
  help: 'Whether this replica takes reads now: reachable, still a replica, and within DATABASE_REPLICA_MAX_LAG_MS',
  labelNames: ['reads', 'replica'] as const,
  registers: [metrics],
});

export const lagTolerantReads = new Counter({
  name: 'sightline_db_lag_tolerant_reads_total',
  help: "Reads that may be served by a replica, by kind (console: an API node's; monitors: a worker's) and where they were served (replica, or primary when none was fit)",
  labelNames: ['reads', 'served_by'] as const,
  registers: [metrics],
});
