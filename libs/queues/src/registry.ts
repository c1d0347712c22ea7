import type { JobsOptions } from 'bullmq';
import type { z } from 'zod';
import { CompletionJobSchema, EvalJobSchema, ExperimentFinalizeJobSchema, RetentionJobSchema, SpanWriteJobSchema } from '@sightline/schemas';

// Retries back off up to 30 s and go on for about half an hour, so a PostgreSQL outage is ridden out
// without losing accepted writes. Completed jobs are removed at once: the data lives in PostgreSQL.
export const RETRY_BACKOFF_TYPE = 'capped-exponential';
export function retryDelayMs(attemptsMade: number): number {
  return Math.min(30_000, 250 * 2 ** Math.max(0, attemptsMade - 1));
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

export const queues = {
  'span-write': { schema: SpanWriteJobSchema, options: durable },
  completion: { schema: CompletionJobSchema, options: atMostOnce },
  // A metric that fails (a judge's provider down) retries with backoff; the last error is recorded.
  eval: { schema: EvalJobSchema, options: { attempts: 5, backoff: { type: RETRY_BACKOFF_TYPE }, removeOnComplete: true, removeOnFail: { count: 10_000 } } },
  // The caller waits for the answer, and the processor always answers: one attempt.
  'experiment-finalize': { schema: ExperimentFinalizeJobSchema, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 1000 } } },
  // Made by a job scheduler; a failed run is simply the next period's work (deleting is idempotent).
  retention: { schema: RetentionJobSchema, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } } },
} as const satisfies Record<string, { schema: z.ZodType; options: JobsOptions }>;

export type QueueName = keyof typeof queues;
export type QueuePayload<N extends QueueName> = z.infer<(typeof queues)[N]['schema']>;
