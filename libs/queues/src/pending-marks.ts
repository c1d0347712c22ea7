import type { ChainableCommander, Redis } from 'ioredis';
import { scanKeys } from '@sightline/runtime';
import type { SpanEvent } from '@sightline/schemas';
import type { RedisKeys } from './keys';
import { dropReservations } from './reservations';
import { withScripts } from './scripts';

// Read-your-writes: each accepted span event's sequence number is a mark in its span's pending set, its
// trace root's, and its organization's (a sorted set by sequence number), set by the accept script
// (sequence.ts). The worker removes the marks once the event's transaction has committed. Reads wait, for a
// bounded time, until the sets they care about are empty; an experiment finish waits until nothing of its
// organization accepted before it is pending. Sets (not counters) make removal idempotent when a job is
// retried after its commit. Marks older than the TTL (a job lost before it was queued and missed by the
// reservation sweep) are not counted in the organization's set, and trimmed from it from time to time; the
// span and root sets expire.
export const PENDING_TTL_SECONDS = 3600;

/**
 * The events of a span-write job's data whose pending marks can be cleared, read without trusting the
 * data: a job that failed because its payload does not parse still holds marks of the events it names.
 */
export function pendingEventsOf(data: unknown): SpanEvent[] {
  const events = (data as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return [];
  return events.filter((e): e is SpanEvent => {
    const { seq, organization_id, trace_id, pending_root } = (e ?? {}) as Partial<Record<keyof SpanEvent, unknown>>;
    return (
      Number.isSafeInteger(seq) &&
      typeof organization_id === 'string' &&
      typeof trace_id === 'string' &&
      (pending_root == null || typeof pending_root === 'string')
    );
  });
}

/**
 * Runs a pipeline and fails if any of its commands failed: ioredis resolves a pipeline even when some
 * commands got an error (a connection lost part-way), and marks left behind would keep reads waiting.
 */
export async function execAll(pipeline: ChainableCommander): Promise<void> {
  const results = await pipeline.exec();
  if (!results) throw new Error('Redis pipeline was not run');
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0];
}

/**
 * Removes the events' marks, and takes them out of the backlog: they are written, or never will be.
 * `reserved`: their reservations are still in the journal (a completion's log, written without a job of its
 * own: reservations.ts), and go with the marks.
 */
export async function clearPending(
  redis: Redis,
  keys: RedisKeys,
  events: readonly SpanEvent[],
  { reserved = false } = {},
): Promise<void> {
  // One command per key, with all its marks: a job's events share organizations and roots, and a command
  // costs Redis and ioredis more than a member does.
  const sets = new Map<string, number[]>();
  const sortedSets = new Map<string, number[]>();
  const mark = (of: Map<string, number[]>, key: string, seq: number) => {
    const seqs = of.get(key);
    if (seqs) seqs.push(seq);
    else of.set(key, [seq]);
  };
  for (const e of events) {
    mark(sets, keys.pendingSpan(e.organization_id, e.trace_id), e.seq);
    if (e.pending_root) mark(sets, keys.pendingRoot(e.organization_id, e.pending_root), e.seq);
    mark(sortedSets, keys.pendingOrganization(e.organization_id), e.seq);
    mark(sortedSets, keys.spanBacklog, e.seq);
  }
  const pipeline = redis.pipeline();
  for (const [key, seqs] of sets) pipeline.srem(key, ...seqs);
  for (const [key, seqs] of sortedSets) pipeline.zrem(key, ...seqs);
  if (reserved)
    dropReservations(
      pipeline,
      keys,
      events.map((e) => e.seq),
    );
  await execAll(pipeline);
}

/**
 * Releases the pending marks of the events forgotten from the backlog as lost (backlog.ts): a job that was
 * queued and then lost leaves no journal entry for the sweep (reservations.ts), and its marks would keep
 * the reads of its spans and every experiment finish of its organization waiting for an hour. Does nothing
 * unless events were forgotten since it last ran, so the pending keys are scanned only after a loss. Safe
 * to run from several processes at once; answers how many marks it released.
 */
export async function releaseForgottenMarks(redis: Redis, keys: RedisKeys): Promise<number> {
  const cutoff = await redis.get(keys.backlogForgotten);
  if (!cutoff) return 0;
  const scripts = withScripts(redis);
  const page = 500;
  let released = 0;
  for await (const batch of scanKeys(redis, keys.spanBacklog, keys.pendingAll)) {
    for (const key of batch) {
      // A span's or a root's set is read whole; an organization's, in pages by score.
      for (let after = '-inf'; ;) {
        const [n, read, last] = await scripts.releaseForgottenMarksLua(1, key, cutoff, after, page);
        released += n;
        if (read < page) break;
        after = last;
      }
    }
  }
  // Events forgotten meanwhile recorded a later cutoff, which stays for the next run.
  await scripts.deleteIfEqualLua(1, keys.backlogForgotten, cutoff);
  return released;
}

/**
 * Holds the organization's pending set open for work that follows a span write (its evaluations), so a
 * finish that waits for the span also waits for it. `seq` is the span event's: the work sorts with it.
 */
export async function holdPending(
  redis: Redis,
  keys: RedisKeys,
  organizationId: string,
  member: string,
  seq: number,
): Promise<void> {
  await redis.zadd(keys.pendingOrganization(organizationId), seq, member);
}

export async function releasePending(
  redis: Redis,
  keys: RedisKeys,
  organizationId: string,
  member: string,
): Promise<void> {
  await redis.zrem(keys.pendingOrganization(organizationId), member);
}

/** Asks `done` with growing pauses until it answers true (then true) or `timeoutMs` passes (then false). */
async function pollUntil(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // Short pauses: the wait is usually a few milliseconds, and each question is one cheap Redis command.
  for (let delay = 2; ; delay = Math.min(delay * 2, 25)) {
    if (await done()) return true;
    if (Date.now() + delay > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Resolves true once every key's set is empty, false if `timeoutMs` passes first. */
export function waitUntilWritten(redis: Redis, pendingKeys: readonly string[], timeoutMs: number): Promise<boolean> {
  return pollUntil(
    async () => (await Promise.all(pendingKeys.map((k) => redis.scard(k)))).every((c) => c === 0),
    timeoutMs,
  );
}

/**
 * Resolves true once none of the organization's events at or below `watermark` is pending, in each of the
 * span-write shards (span-shards.ts) given by its keys; false on timeout.
 */
export function waitUntilApplied(
  redis: Redis,
  organizationId: string,
  marks: readonly { keys: RedisKeys; watermark: number }[],
  timeoutMs: number,
): Promise<boolean> {
  return pollUntil(async () => {
    const counts = await Promise.all(
      // Sequence numbers are microseconds of Redis time: a mark more than the TTL below the watermark is stale.
      marks.map(({ keys, watermark }) =>
        redis.zcount(keys.pendingOrganization(organizationId), watermark - PENDING_TTL_SECONDS * 1e6, watermark),
      ),
    );
    return counts.every((count) => count === 0);
  }, timeoutMs);
}
