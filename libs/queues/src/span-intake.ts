import type { Redis } from 'ioredis';
import { createBatcher } from '@sightline/core';
import { publishInOrder, spanWriteJobEvents, waitForReplicas } from '@sightline/runtime';
import type { SpanEvent } from '@sightline/schemas';
import type { RedisKeys } from './keys';
import { clearPending } from './pending-marks';
import type { Producer } from './producer';
import { confirmReservations } from './reservations';
import { takeSequenceNumbers, type Announcement } from './sequence';
import { byShard, type SpanShards } from './span-shards';

export type NewSpanEvent = Omit<SpanEvent, 'seq'>;

type SpanCreate = {
  organization_id: string;
  trace_id: string;
  root_trace_id?: string | null;
  parent_trace_id?: string | null;
  project_id: string;
  request_id?: string;
  fields: Omit<SpanEvent['fields'], 'root_trace_id' | 'parent_trace_id' | 'project_id'>;
  tree?: SpanEvent['tree'];
  otel?: SpanEvent['otel'];
};

/**
 * The `pending_root` of an event of span `traceId` in the trace rooted at `root`: the root's pending set, which
 * a read of the whole trace waits on. None for the root span itself: that read waits on the span's own set
 * too (span-shards.ts, pendingKeys), so a second mark would cost every trace's root three more Redis commands
 * (marked, its TTL set, cleared) for nothing. Left out here rather than by the scripts, so that events
 * queued by an older release, marked in both sets, are still cleared from both.
 */
export const pendingRootOf = (traceId: string, root: string | null | undefined) =>
  root && root !== traceId ? { pending_root: root } : {};

/**
 * The event that creates a span. A span without a root is its own root, one without a parent its own
 * parent; the event is pending under its trace's root (pendingRootOf), so that a read of the trace waits for it.
 */
export function spanCreateEvent({
  organization_id,
  trace_id,
  root_trace_id,
  parent_trace_id,
  project_id,
  request_id,
  fields,
  tree,
  otel,
}: SpanCreate): NewSpanEvent {
  const root = root_trace_id ?? trace_id;
  return {
    kind: 'create',
    organization_id,
    trace_id,
    ...pendingRootOf(trace_id, root),
    ...(request_id && { request_id }),
    ...(tree && { tree }),
    ...(otel && { otel }),
    fields: { ...fields, project_id, root_trace_id: root, parent_trace_id: parent_trace_id ?? trace_id },
  };
}

/** Span events in one job at most: a job of 1000 spans of a few KB each stays a few MB in Redis. */
const EVENTS_PER_JOB = 1000;

/** Redis's replicas did not confirm a queued job in time: it may be written, but it is not yet safe. */
export class ReplicasBehindError extends Error {
  constructor(
    readonly copies: number,
    readonly wanted: number,
    readonly timeoutMs: number,
  ) {
    super(`Redis copied the span events to ${copies} of ${wanted} replicas within ${timeoutMs} ms`);
  }
}

type IntakeOptions = {
  /** Events are refused (SpanBacklogFullError) while this many are waiting to be written; 0: no bound. */
  backlogLimit?: number;
  /**
   * Each job is durable only once this many of Redis's replicas hold it (WAIT), else ReplicasBehindError:
   * Redis replicates asynchronously, and a master lost before it sent a job on takes the job with it.
   */
  replicas?: { count: number; timeoutMs: number };
};

/** The one way span events enter the system, from the API or from a worker (completion logs). */
export function createSpanIntake(
  redis: Redis,
  producer: Producer<'span-write'>,
  keys: RedisKeys,
  { backlogLimit = 0, replicas }: IntakeOptions = {},
) {
  const addJob = async (events: SpanEvent[]) => {
    await producer.add({ events });
    spanWriteJobEvents.observe(events.length);
    if (!replicas?.count) return;
    // On the connection that added the job; the sequence counter shares the job's slot on a cluster.
    const copies = await waitForReplicas(producer.connection, keys.seq, replicas.count, replicas.timeoutMs);
    if (copies < replicas.count) throw new ReplicasBehindError(copies, replicas.count, replicas.timeoutMs);
  };
  /** Adds the job; if it cannot, the events' pending marks go, so no read waits for them. */
  async function addJobOrRelease(events: SpanEvent[]): Promise<void> {
    try {
      await addJob(events);
    } catch (err) {
      await clearPending(redis, keys, events).catch(() => {});
      throw err;
    }
  }
  async function reserve(events: NewSpanEvent[], announce?: Announcement, keep = false): Promise<SpanEvent[]> {
    const seqs = await takeSequenceNumbers(redis, keys, events, backlogLimit, announce, keep);
    return events.map((e, i) => ({ ...e, seq: seqs[i] }));
  }
  // Concurrent callers share one numbering script and one job: per span, Redis work is a few set
  // operations instead of a job's whole life (add, fetch, complete, remove), which bounds the ingest rate.
  const batching = { maxItems: EVENTS_PER_JOB, lingerMs: 0, maxConcurrent: 4 };
  // Confirming a queued job's reservation is not waited for: should it be lost, the sweep releases the
  // marks later (see reservations.ts), which costs a read-your-writes wait, never data.
  const confirm = (events: SpanEvent[]) =>
    void confirmReservations(
      redis,
      keys,
      events.map((e) => e.seq),
    ).catch(() => {});
  const accepting = createBatcher<NewSpanEvent>(async (events) => {
    const reserved = await reserve(events);
    await addJobOrRelease(reserved);
    confirm(reserved.slice(0, 1));
  }, batching);
  // Events reserved earlier keep their marks while a failed shared job is retried per caller. The job's
  // reservations are confirmed together: one Redis call a job, not one a caller.
  const enqueuing = createBatcher<SpanEvent>(async (events) => {
    await addJob(events);
    confirm(events);
  }, batching);
  return {
    /**
     * Numbers the events in acceptance order and marks them pending, so reads wait for them from now on;
     * then publishes `announce`, in the same round trip. With `keep`, the events are kept in Redis until they
     * are written, by their caller or, failing that, by a job that recoverKeptLogs queues (reservations.ts).
     */
    reserve,
    /** Queues events `reserve` numbered, with those of concurrent callers. Durable once it resolves. */
    async enqueue(events: SpanEvent[]): Promise<void> {
      try {
        await enqueuing.add(events);
      } catch (err) {
        await clearPending(redis, keys, events).catch(() => {});
        throw err;
      }
    },
    /** Durable once it resolves: Redis holds the job with these events. */
    accept: (events: NewSpanEvent[]) => accepting.add(events),
  };
}
export type SpanIntake = ReturnType<typeof createSpanIntake>;

/**
 * The intake over every span-write shard (span-shards.ts): each event goes to its span's shard, with
 * `producers[i]` feeding shard i. The backlog bound is shared out: each shard holds at most its part.
 */
export function createShardedIntake(
  redis: Redis,
  shards: SpanShards,
  producers: readonly Producer<'span-write'>[],
  { backlogLimit = 0, ...options }: IntakeOptions = {},
): SpanIntake {
  const count = shards.all.length;
  const perShard = Math.ceil(backlogLimit / count);
  const intakes = shards.all.map((shard, i) =>
    createSpanIntake(redis, producers[i], shard.keys, { ...options, backlogLimit: perShard }),
  );
  if (count === 1) return intakes[0];
  const home = shards.all[0].keys;
  return {
    // A completion's answer is published where its streamed chunks are (publishInOrder's home key), after
    // its log is marked pending in the log's own shards: one more round trip than with one shard.
    async reserve(events, announce, keep) {
      const reserved: SpanEvent[] = new Array(events.length);
      await Promise.all(
        byShard(shards, events).map(async ({ index, items, at }) => {
          const numbered = await intakes[index].reserve(items, undefined, keep);
          numbered.forEach((event, i) => (reserved[at[i]] = event));
        }),
      );
      if (announce) await publishInOrder(redis, home.seq, announce.channel, announce.message);
      return reserved;
    },
    // A request whose events span several shards can be refused by one after another took its part: the
    // client's retry writes that part again, which replaces it (a span is stored once, by its id).
    async enqueue(events) {
      await Promise.all(byShard(shards, events).map(({ index, items }) => intakes[index].enqueue(items)));
    },
    async accept(events) {
      await Promise.all(byShard(shards, events).map(({ index, items }) => intakes[index].accept(items)));
    },
  };
}
