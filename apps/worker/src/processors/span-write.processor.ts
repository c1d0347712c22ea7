import { UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createBatcher } from '@sightline/core';
import { applySpanEvents, type EvalTrigger, type Sql } from '@sightline/db';
import {
  clearPending,
  holdPending,
  publishLiveRoots,
  type Producer,
  type RedisKeys,
  type SpanIntake,
} from '@sightline/queues';
import { spanWriteTransactionEvents } from '@sightline/runtime';
import type { SpanEvent } from '@sightline/schemas';
import type { Processor } from '../register-worker';
import type { TraceSettling } from './trace-settle.processor';

// PostgreSQL refusing the data itself (SQLSTATE classes 22 data exception, 23 integrity, 54 program
// limit): retrying cannot help, so the job fails at once instead of blocking reads for its retries.
const isDataError = (err: unknown) => /^(22|23|54)/.test(String((err as { code?: unknown }).code ?? ''));

type Deps = {
  sql: Sql;
  redis: Redis;
  /** The keys of the shard whose queue this worker takes jobs from. */
  keys: RedisKeys;
  /** The home shard's, where the live tail's channels are. */
  homeKeys: RedisKeys;
  batchSize: number;
  evals: Producer<'eval'>;
  settling: TraceSettling;
};

// Evaluations are held pending before the span's own pending marks go, so that nothing waiting for
// the span (an experiment finish) can start between the two. The job id makes a redelivered span
// write schedule its evaluations once.
async function scheduleEvals(deps: Deps, triggers: EvalTrigger[], events: SpanEvent[]) {
  const requestIds = triggers.length ? new Map(events.map((e) => [e.seq, e.request_id])) : null;
  for (const t of triggers) {
    const member = `eval:${t.trace_id}:${t.seq}`;
    await holdPending(deps.redis, deps.keys, t.organization_id, member, t.seq);
    await deps.evals.add(
      {
        organization_id: t.organization_id,
        trace_id: t.trace_id,
        metric_names: t.metric_names,
        pending_member: member,
        request_id: requestIds?.get(t.seq),
      },
      { jobId: `${t.organization_id}-${t.trace_id}-${t.seq}` },
    );
  }
}

async function write(deps: Deps, events: SpanEvent[], { reserved = false } = {}) {
  const written = await applySpanEvents(deps.sql, events);
  await scheduleEvals(deps, written.evalTriggers, events);
  // After the commit, and before the job completes: a redelivered job schedules them again, never none.
  await deps.settling.watch(written.traces);
  spanWriteTransactionEvents.observe(events.length);
  // After the commit: a read that waits on these sets now finds the data.
  await clearPending(deps.redis, deps.keys, events, { reserved });
  // Best effort: the live tail is a convenience, and the write is already durable and answered.
  await publishLiveRoots(deps.redis, deps.homeKeys, events).catch(() => {});
}

/**
 * The fallback once PostgreSQL refused a job's batch: writes its events one by one, drops (and logs) the
 * ones refused, and fails the job for good if there were any.
 */
async function writeOneByOne(deps: Deps, events: SpanEvent[], log: Logger): Promise<void> {
  // A job holds the spans of many requests: find the events PostgreSQL refuses and keep the rest.
  const refused: { event: SpanEvent; err: Error }[] = [];
  for (const event of events) {
    try {
      await write(deps, [event]);
    } catch (eventErr) {
      if (!isDataError(eventErr)) throw eventErr;
      refused.push({ event, err: eventErr as Error });
    }
  }
  if (!refused.length) return;
  log.error(
    {
      refused: refused.map(({ event, err }) => ({
        trace_id: event.trace_id,
        kind: event.kind,
        reqId: event.request_id,
        err: err.message,
      })),
    },
    'span events refused by PostgreSQL; dropped',
  );
  await clearPending(
    deps.redis,
    deps.keys,
    refused.map((r) => r.event),
  );
  // The job stays in the failed set as a record; the events that were written are not retried.
  throw new UnrecoverableError(
    `${refused.length} of ${events.length} span events refused by PostgreSQL: ${refused[0].err.message}`,
  );
}

/**
 * How long a completion's log waits for others to share its transaction. It is durable in Redis from the
 * answer on, and reads wait for it (its pending mark), so the wait costs a read right after the answer these
 * milliseconds at most. It keeps the write off the moment the caller's next request arrives: written at once,
 * a sequential caller's next call waited for the worker and PostgreSQL busy with the last one's log (1.4 ms
 * of its latency through the gateway, docs/benchmarks-notes.md, issue 39, 2026-12-06 evening).
 */
const LOG_LINGER_MS = 5;

/**
 * Writes the logs of completions this process answered, with no span-write job (issue 39: a job's life in
 * Redis cost as much as the completion's own): the logs finishing within LOG_LINGER_MS of each other share a
 * transaction, and their reservations leave the journal with their marks. Should the write fail, they are
 * queued as a job, as any span events; should that fail too, or the process die first, the journal keeps
 * them for recoverKeptLogs. Resolves once they are durable.
 */
export function completionLogWriter(deps: Deps & { spans: SpanIntake; log: Logger }) {
  const batcher = createBatcher<SpanEvent>((events) => write(deps, events, { reserved: true }), {
    maxItems: deps.batchSize,
    lingerMs: LOG_LINGER_MS,
  });
  return async (events: SpanEvent[]): Promise<void> => {
    try {
      await batcher.add(events);
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, "could not write a completion's log: queued instead");
      await deps.spans.enqueue(events);
    }
  };
}

/** Writes span events from many jobs in one transaction; each job completes once its events are committed. */
export function spanWriteProcessor(deps: Deps): Processor<'span-write'> {
  const batcher = createBatcher<SpanEvent>((events) => write(deps, events), {
    maxItems: deps.batchSize,
    lingerMs: 2,
  });

  return async (payload, job, log) => {
    try {
      // A job can hold up to 1000 events; no transaction takes more than a batch of them (each span and
      // each trace takes a lock, and PostgreSQL's lock table is shared by every connection).
      const chunks = [];
      for (let i = 0; i < payload.events.length; i += deps.batchSize)
        chunks.push(payload.events.slice(i, i + deps.batchSize));
      await Promise.all(chunks.map((chunk) => batcher.add(chunk)));
    } catch (err) {
      if (!isDataError(err)) throw err;
      await writeOneByOne(deps, payload.events, log);
    }
  };
}
