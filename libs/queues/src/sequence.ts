import type { Redis } from 'ioredis';
import { BACKLOG_HORIZON_SECONDS } from './backlog';
import type { RedisKeys } from './keys';
import { PENDING_TTL_SECONDS } from './pending-marks';
import { journal } from './reservations';
import { withScripts } from './scripts';

// Sequence numbers order every span event (and the operations that must see them, such as an experiment
// finish) in acceptance order. One script (lua/accept-span-events.lua) numbers events, marks them pending
// (pending-marks.ts), adds them to the backlog (backlog.ts) and journals the reservation (reservations.ts),
// so that none of these can be seen without the others.

/** The message prefix of the accept script's refusal. */
const BACKLOG_FULL = 'SPAN_BACKLOG_FULL';

type Accepting = { organization_id: string; trace_id: string; pending_root?: string };

/** A message to publish on a channel in the same call that accepts events, once they are accepted. */
export type Announcement = { channel: string; message: string };

/** Thrown, with nothing accepted, when `backlogLimit` span events or more are waiting to be written. */
export class SpanBacklogFullError extends Error {
  constructor(
    readonly backlog: number,
    readonly limit: number,
  ) {
    super(`${backlog} span events are waiting to be written (limit ${limit})`);
  }
}

/**
 * Numbers the events and marks them pending. With a `backlogLimit` (0: none), refuses them all, leaving
 * nothing behind, while that many events or more are waiting to be written. `announce` is published
 * right after, in the same round trip (and not at all when the events are refused). `keep` keeps the
 * events themselves in the reservation's journal entry until they are written (reservations.ts).
 */
export async function takeSequenceNumbers(
  redis: Redis,
  keys: RedisKeys,
  events: readonly Accepting[],
  backlogLimit = 0,
  announce?: Announcement,
  keep = false,
): Promise<number[]> {
  const eventKeys = events.flatMap((e) => [
    keys.pendingSpan(e.organization_id, e.trace_id),
    // No root: the span's own set again, which the script marks once. Not '': a Redis Cluster refuses a script
    // whose keys are not all in one slot, and '' is in another.
    e.pending_root
      ? keys.pendingRoot(e.organization_id, e.pending_root)
      : keys.pendingSpan(e.organization_id, e.trace_id),
    keys.pendingOrganization(e.organization_id),
  ]);
  const { index, events: journalEvents } = journal(keys);
  try {
    const seqs = await withScripts(redis).acceptSpanEventsLua(
      4 + eventKeys.length,
      keys.seq,
      keys.spanBacklog,
      ...eventKeys,
      index,
      journalEvents,
      events.length,
      backlogLimit,
      BACKLOG_HORIZON_SECONDS,
      PENDING_TTL_SECONDS,
      announce?.channel ?? '',
      announce?.message ?? '',
      ...(keep ? [JSON.stringify(events)] : []),
    );
    return seqs.map(Number);
  } catch (err) {
    const message = (err as Error).message ?? '';
    if (message.startsWith(BACKLOG_FULL))
      throw new SpanBacklogFullError(Number(message.slice(BACKLOG_FULL.length + 1)), backlogLimit);
    throw err;
  }
}

/** The sequence number of the latest accepted span event: everything accepted so far is at or below it. */
export async function currentWatermark(redis: Redis, keys: RedisKeys): Promise<number> {
  return Number((await redis.get(keys.seq)) ?? 0);
}

/** A fresh sequence number, above every span event accepted so far: orders an operation among them. */
export async function takeWatermark(redis: Redis, keys: RedisKeys): Promise<number> {
  return redis.incr(keys.seq);
}
