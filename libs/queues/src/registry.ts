import type { JobsOptions, Queue } from 'bullmq';
import type { z } from 'zod';
import {
  CompletionJobSchema,
  EvalJobSchema,
  ExperimentFinalizeJobSchema,
  RetentionJobSchema,
  SpanWriteJobSchema,
  StatisticsJobSchema,
  TraceHoursJobSchema,
  TraceSettleJobSchema,
  EvalBackfillJobSchema,
  MonitorDeliveryJobSchema,
  MonitorEvaluateJobSchema,
  type WorkerEnv,
} from '@sightline/schemas';

// Retries back off up to 30 s and go on for about half an hour, so a PostgreSQL outage is ridden out
// without losing accepted writes. Completed jobs are removed at once: the data lives in PostgreSQL.
export const RETRY_BACKOFF_TYPE = 'capped-exponential';
export function retryDelayMs(attemptsMade: number): number {
  return Math.min(30_000, 250 * 2 ** Math.max(0, attemptsMade - 1));
}

// A monitor's notification that its receiver refused is tried again after MONITOR_RETRY_BASE_MS, then
// twice as long each time; the processor stops at MONITOR_DELIVERY_ATTEMPTS (the job's own limit is a cap).
export const DELIVERY_BACKOFF_TYPE = 'delivery-exponential';
export function deliveryDelayMs(attemptsMade: number, baseMs: number): number {
  return baseMs * 2 ** Math.max(0, attemptsMade - 1);
}

const durable: JobsOptions = {
  attempts: 60,
  backoff: { type: RETRY_BACKOFF_TYPE },
  removeOnComplete: true,
  removeOnFail: { count: 10_000 },
};

// A completion calls a paid provider: it runs at most once (the SDK retries transient errors inside the
// job). A worker that dies mid-call fails the job rather than letting another worker call again.
const atMostOnce: JobsOptions = { attempts: 1, removeOnComplete: true, removeOnFail: { count: 10_000 } };

/** How a queue's workers run its jobs, and what they do when a worker dies holding one. */
type WorkerSettings = {
  concurrency: (env: WorkerEnv) => number;
  lockDuration: number;
  stalledInterval: number;
  /** How often a job may be found stalled (its worker died) and be run again; 0: never run again. */
  maxStalledCount: number;
};

// When a worker dies, the jobs it held are found by another worker's stalled-job check once their locks
// lapse (lockDuration, checked every stalledInterval): with BullMQ's defaults (30 s, 30 s) that takes up
// to a minute and a half, during which reads of their spans wait and answer 503. Locks are renewed at
// half their duration, in one call for all of a worker's jobs, so shorter ones cost little. Span events
// fold idempotently and evaluations and finishes can run again, so those jobs are redelivered, several
// times: with BullMQ's default of one, a job held at two crashes (a worker killed while still catching
// up) would fail and its spans be lost.
const redelivered = { lockDuration: 15_000, stalledInterval: 10_000, maxStalledCount: 5 };

// A job of a job scheduler: a failed run is simply the next period's work (each run redoes what is due).
const scheduled = {
  options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  worker: { ...redelivered, concurrency: () => 1 },
} satisfies { options: JobsOptions; worker: WorkerSettings };

/** Every queue: its payload schema, its job options, and how its workers run it. */
export const queues = {
  'span-write': {
    schema: SpanWriteJobSchema,
    options: durable,
    worker: { ...redelivered, concurrency: (env) => env.WORKER_CONCURRENCY },
  },
  // A completion is never run twice (at most once, above), and its caller is waiting: its stall is found
  // sooner, and failed rather than run again.
  completion: {
    schema: CompletionJobSchema,
    options: atMostOnce,
    worker: {
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 0,
      concurrency: (env) => env.COMPLETION_CONCURRENCY,
    },
    /** Why a stalled job is not run again, told to its caller. */
    notRunAgainBecause: 'so that the provider is called at most once per request',
  },
  // A metric that fails (a judge's provider down) retries with backoff; the last error is recorded.
  eval: {
    schema: EvalJobSchema,
    options: {
      attempts: 5,
      backoff: { type: RETRY_BACKOFF_TYPE },
      removeOnComplete: true,
      removeOnFail: { count: 10_000 },
    },
    worker: { ...redelivered, concurrency: (env) => env.COMPLETION_CONCURRENCY },
  },
  // A trace of a project with evaluation rules, once it has settled: its rules' runs claimed and queued
  // (idempotently, so it is retried like a span write while PostgreSQL is away).
  'trace-settle': {
    schema: TraceSettleJobSchema,
    options: durable,
    // Many jobs at once, settled together (the processor batches them).
    worker: { ...redelivered, concurrency: () => 500 },
  },
  // A rule over stored traces: resumes at its cursor when run again (retried, or redelivered after a crash).
  'eval-backfill': {
    schema: EvalBackfillJobSchema,
    options: durable,
    worker: { ...redelivered, concurrency: () => 2 },
  },
  // The caller waits for the answer, and the processor always answers: one attempt.
  'experiment-finalize': {
    schema: ExperimentFinalizeJobSchema,
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 1000 } },
    worker: { ...redelivered, concurrency: () => 4 },
  },
  // Upkeep made by job schedulers (see scheduleEvery): removing expired traces, analyzing the span tables,
  // folding the roots' changes into the dashboard's hours.
  retention: { schema: RetentionJobSchema, ...scheduled },
  statistics: { schema: StatisticsJobSchema, ...scheduled },
  'trace-hours': { schema: TraceHoursJobSchema, ...scheduled },
  // Every enabled monitor evaluated, once per interval across all workers.
  'monitor-evaluate': { schema: MonitorEvaluateJobSchema, ...scheduled },
  // A change of a monitor's state told to one channel: retried with backoff (see DELIVERY_BACKOFF_TYPE),
  // and sent again by another worker when the one sending it dies (the receiver tells a repeat by its
  // x-sightline-delivery id).
  'monitor-delivery': {
    schema: MonitorDeliveryJobSchema,
    options: {
      attempts: 30,
      backoff: { type: DELIVERY_BACKOFF_TYPE },
      removeOnComplete: true,
      removeOnFail: { count: 10_000 },
    },
    worker: { ...redelivered, concurrency: () => 20 },
  },
} as const satisfies Record<
  string,
  { schema: z.ZodType; options: JobsOptions; worker: WorkerSettings; notRunAgainBecause?: string }
>;

export type QueueName = keyof typeof queues;
export type QueuePayload<N extends QueueName> = z.infer<(typeof queues)[N]['schema']>;

type ScheduledQueue = 'retention' | 'statistics' | 'trace-hours' | 'monitor-evaluate';

/**
 * Makes one job every `everyMs` on a scheduled queue, whichever worker upserts it (the scheduler is
 * named after the queue, so every worker upserts the same one); a global concurrency of 1 keeps a slow
 * run from overlapping the next one on another worker.
 */
export async function scheduleEvery<N extends ScheduledQueue>(
  queue: Queue,
  name: N,
  everyMs: number,
  data: QueuePayload<N>,
): Promise<void> {
  await queue.setGlobalConcurrency(1);
  await queue.upsertJobScheduler(name, { every: everyMs }, { name, data, opts: queues[name].options });
}
