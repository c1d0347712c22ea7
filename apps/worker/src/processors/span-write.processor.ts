import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { applySpanEvents, type EvalTrigger, type Sql } from '@sightline/db';
import { clearPending, holdPending, type Producer, type RedisKeys } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { createBatcher } from '../batcher';
import type { Processor } from '../register-worker';

// PostgreSQL refusing the data itself (SQLSTATE classes 22 data exception, 23 integrity, 54 program
// limit): retrying cannot help, so the job fails at once instead of blocking reads for its retries.
const isDataError = (err: unknown) => /^(22|23|54)/.test(String((err as { code?: unknown }).code ?? ''));

type Deps = { sql: Sql; redis: Redis; keys: RedisKeys; batchSize: number; log: Logger; evals: Producer<'eval'> };

/** Writes span events from many jobs in one transaction; each job completes once its events are committed. */
export function spanWriteProcessor(deps: Deps): Processor<'span-write'> {
  // Evaluations are held pending before the span's own pending marks go, so that nothing waiting for
  // the span (an experiment finish) can start between the two. The job id makes a redelivered span
  // write schedule its evaluations once.
  async function scheduleEvals(triggers: EvalTrigger[]) {
    for (const t of triggers) {
      const member = `eval:${t.trace_id}:${t.seq}`;
      await holdPending(deps.redis, deps.keys, t.organization_id, member, t.seq);
      await deps.evals.add({ organization_id: t.organization_id, trace_id: t.trace_id, metric_names: t.metric_names, pending_member: member }, { jobId: `${t.organization_id}-${t.trace_id}-${t.seq}` });
    }
  }

  const batcher = createBatcher<SpanEvent>(
    async (events) => {
      await scheduleEvals(await applySpanEvents(deps.sql, events));
      // After the commit: a read that waits on these sets now finds the data.
      await clearPending(deps.redis, deps.keys, events);
    },
    { maxItems: deps.batchSize, lingerMs: 2 },
  );
  return async (payload, job) => {
    try {
      await batcher.add(payload.events);
    } catch (err) {
      if (!isDataError(err)) throw err;
      deps.log.error({ jobId: job.id, err: (err as Error).message, traces: payload.events.map((e) => e.trace_id) }, 'span events refused by PostgreSQL; dropped');
      await clearPending(deps.redis, deps.keys, payload.events);
      throw new UnrecoverableError(`refused by PostgreSQL: ${(err as Error).message}`);
    }
  };
}
