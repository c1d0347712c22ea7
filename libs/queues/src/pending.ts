import type { ChainableCommander, Redis } from 'ioredis';
import type { SpanEvent } from '@sightline/schemas';
import type { RedisKeys } from './keys';

// Read-your-writes: when the API accepts a span event it takes a sequence number and records it in the
// span's pending set, its trace root's, and its organization's (a sorted set by sequence number) in one
// atomic script. The worker removes it once the event's transaction has committed. Reads wait, for a
// bounded time, until the sets they care about are empty; an experiment finish waits until nothing of
// its organization accepted before it is pending. Sets (not counters) make removal idempotent when a
// job is retried after its commit. Sequence numbers are microseconds of Redis time, so entries older
// than the TTL (a job lost before it was enqueued) are dropped from the organization's set.
const PENDING_TTL_SECONDS = 3600;

// The backlog (see backlog.ts) is one more sorted set of the same sequence numbers, across organizations:
// its size is the number of span events accepted and not yet written, read in O(1) by the same script
// that accepts, so the bound costs no extra round trip and no request slips past it between a check and
// an accept. Removal by member is idempotent, so a redelivered job cannot make the count drift. Events
// that will never be written leave it with their pending marks (a job failed for good, a job lost before
// it was enqueued: see workers.ts and sweepUnconfirmed), and in any case after BACKLOG_HORIZON_SECONDS.
export const BACKLOG_HORIZON_SECONDS = 24 * 3600;
/** The message prefix of the accept script's refusal. */
const BACKLOG_FULL = 'SPAN_BACKLOG_FULL';

const ACCEPT_SCRIPT = `
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local backlog = KEYS[2]
redis.call('ZREMRANGEBYSCORE', backlog, '-inf', string.format('%d', now - ${BACKLOG_HORIZON_SECONDS} * 1000000))
if limit > 0 then
  -- Refused before anything is numbered or marked: a refused request leaves no trace.
  local waiting = redis.call('ZCARD', backlog)
  if waiting >= limit then return redis.error_reply('${BACKLOG_FULL} ' .. waiting) end
end
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
-- Never below the clock: a Redis that lost the counter still hands out increasing numbers.
local seq = math.max(now, last + 1)
redis.call('SET', KEYS[1], string.format('%d', seq + n - 1))
local out = {}
local orgs = {}
for i = 1, n do
  local s = string.format('%d', seq + i - 1)
  out[i] = s
  for _, k in ipairs({KEYS[3 * i], KEYS[3 * i + 1]}) do
    if k ~= '' then
      redis.call('SADD', k, s)
      redis.call('EXPIRE', k, ${PENDING_TTL_SECONDS})
    end
  end
  local org = KEYS[3 * i + 2]
  redis.call('ZADD', org, s, s)
  redis.call('ZADD', backlog, s, s)
  orgs[org] = true
end
for org in pairs(orgs) do
  redis.call('ZREMRANGEBYSCORE', org, '-inf', string.format('%d', now - ${PENDING_TTL_SECONDS} * 1000000))
  redis.call('EXPIRE', org, ${PENDING_TTL_SECONDS})
end
-- The reservation's journal entry: its first number, and its events' pending keys in order.
redis.call('ZADD', KEYS[3 * n + 3], seq, string.format('%d', seq))
redis.call('HSET', KEYS[3 * n + 4], string.format('%d', seq), table.concat(KEYS, '\\n', 3, 3 * n + 2))
return out
`;

// A reservation whose job never reaches the queue (Redis or the API node died in between, or the add
// failed and so did the release) would leave its marks for the TTL: reads of its spans would answer 503,
// and its organization's experiment reads and finishes would wait for it, for an hour. So each
// reservation is kept in a journal until its job is known to be queued (confirmReservations), and
// sweepUnconfirmed takes the marks of one still there after a grace away. A job queued while its
// confirmation was lost (the API died just after the add) loses only its read-your-writes wait, never data.
const UNCONFIRMED_GRACE_SECONDS = 30;
const journal = (keys: RedisKeys) => ({ index: `${keys.seq}:unconfirmed`, events: `${keys.seq}:unconfirmed-events` });

// The pending keys come out of the journal rather than KEYS: Sightline runs on one Redis, not a cluster.
const SWEEP_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[1]) * 1000000), 'LIMIT', 0, tonumber(ARGV[2]))
local cleared = 0
for _, first in ipairs(stale) do
  local packed = redis.call('HGET', KEYS[2], first)
  if packed then
    local k = {}
    for key in string.gmatch(packed .. '\\n', '([^\\n]*)\\n') do k[#k + 1] = key end
    for e = 0, #k / 3 - 1 do
      local s = string.format('%d', tonumber(first) + e)
      for _, set in ipairs({k[3 * e + 1], k[3 * e + 2]}) do
        if set ~= '' then redis.call('SREM', set, s) end
      end
      redis.call('ZREM', k[3 * e + 3], s)
      redis.call('ZREM', KEYS[3], s)
      cleared = cleared + 1
    end
  end
  redis.call('ZREM', KEYS[1], first)
  redis.call('HDEL', KEYS[2], first)
end
return {#stale, cleared}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    acceptSpanEvents(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
  }
}

type Accepting = { organization_id: string; trace_id: string; pending_root?: string };

/** Thrown, with nothing accepted, when `backlogLimit` span events or more are waiting to be written. */
export class SpanBacklogFullError extends Error {
  constructor(readonly backlog: number, readonly limit: number) {
    super(`${backlog} span events are waiting to be written (limit ${limit})`);
  }
}

/**
 * Numbers the events and marks them pending. With a `backlogLimit` (0: none), refuses them all, leaving
 * nothing behind, while that many events or more are waiting to be written.
 */
export async function takeSequenceNumbers(redis: Redis, keys: RedisKeys, events: readonly Accepting[], backlogLimit = 0): Promise<number[]> {
  const eventKeys = events.flatMap((e) => [
    keys.pendingSpan(e.organization_id, e.trace_id),
    e.pending_root ? keys.pendingRoot(e.organization_id, e.pending_root) : '',
    keys.pendingOrganization(e.organization_id),
  ]);
  if (!redis.acceptSpanEvents) redis.defineCommand('acceptSpanEvents', { lua: ACCEPT_SCRIPT });
  try {
    // defineCommand sends EVALSHA, and the script text only when Redis does not have it yet.
    const { index, events: journalEvents } = journal(keys);
    const seqs = await redis.acceptSpanEvents(4 + eventKeys.length, keys.seq, keys.spanBacklog, ...eventKeys, index, journalEvents, events.length, backlogLimit);
    return seqs.map(Number);
  } catch (err) {
    const message = (err as Error).message ?? '';
    if (message.startsWith(BACKLOG_FULL)) throw new SpanBacklogFullError(Number(message.slice(BACKLOG_FULL.length + 1)), backlogLimit);
    throw err;
  }
}

/**
 * The events of a span-write job's data whose pending marks can be cleared, read without trusting the
 * data: a job that failed because its payload does not parse still holds marks of the events it names.
 */
export function pendingEventsOf(data: unknown): SpanEvent[] {
  const events = (data as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return [];
  return events.filter((e): e is SpanEvent => {
    const { seq, organization_id, trace_id, pending_root } = (e ?? {}) as Partial<Record<keyof SpanEvent, unknown>>;
    return Number.isSafeInteger(seq) && typeof organization_id === 'string' && typeof trace_id === 'string' && (pending_root == null || typeof pending_root === 'string');
  });
}

/**
 * Runs a pipeline and fails if any of its commands failed: ioredis resolves a pipeline even when some
 * commands got an error (a connection lost part-way), and marks left behind would keep reads waiting.
 */
async function execAll(pipeline: ChainableCommander): Promise<void> {
  const results = await pipeline.exec();
  if (!results) throw new Error('Redis pipeline was not run');
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0];
}

export async function clearPending(redis: Redis, keys: RedisKeys, events: readonly SpanEvent[]): Promise<void> {
  const pipeline = redis.pipeline();
  for (const e of events) {
    pipeline.srem(keys.pendingSpan(e.organization_id, e.trace_id), e.seq);
    if (e.pending_root) pipeline.srem(keys.pendingRoot(e.organization_id, e.pending_root), e.seq);
    pipeline.zrem(keys.pendingOrganization(e.organization_id), e.seq);
  }
  if (events.length) pipeline.zrem(keys.spanBacklog, ...events.map((e) => e.seq));
  await execAll(pipeline);
}

/** The sequence number of the latest accepted span event: everything accepted so far is at or below it. */
export async function currentWatermark(redis: Redis, keys: RedisKeys): Promise<number> {
  return Number((await redis.get(keys.seq)) ?? 0);
}

/**
 * Holds the organization's pending set open for work that follows a span write (its evaluations), so a
 * finish that waits for the span also waits for it. `seq` is the span event's: the work sorts with it.
 */
export async function holdPending(redis: Redis, keys: RedisKeys, organizationId: string, member: string, seq: number): Promise<void> {
  await redis.zadd(keys.pendingOrganization(organizationId), seq, member);
}

export async function releasePending(redis: Redis, keys: RedisKeys, organizationId: string, member: string): Promise<void> {
  await redis.zrem(keys.pendingOrganization(organizationId), member);
}

/** A fresh sequence number, above every span event accepted so far: orders an operation among them. */
export async function takeWatermark(redis: Redis, keys: RedisKeys): Promise<number> {
  return redis.incr(keys.seq);
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
  return pollUntil(async () => (await Promise.all(pendingKeys.map((k) => redis.scard(k)))).every((c) => c === 0), timeoutMs);
}

/** Resolves true once none of the organization's events at or below `watermark` is pending, false on timeout. */
export function waitUntilApplied(redis: Redis, keys: RedisKeys, organizationId: string, watermark: number, timeoutMs: number): Promise<boolean> {
  return pollUntil(async () => (await redis.zcount(keys.pendingOrganization(organizationId), '-inf', watermark)) === 0, timeoutMs);
}

/**
 * Takes reservations out of the journal once the jobs holding their events are queued (or their marks
 * released). `seqs` may hold any of a reservation's numbers: only its first is in the journal.
 */
export async function confirmReservations(redis: Redis, keys: RedisKeys, seqs: readonly number[]): Promise<void> {
  if (!seqs.length) return;
  const { index, events } = journal(keys);
  await execAll(redis.pipeline().zrem(index, ...seqs).hdel(events, ...seqs.map(String)));
}

/**
 * Releases the pending marks of reservations still unconfirmed after the grace: their jobs were never
 * queued. Safe to run from several processes at once; answers how many events it released.
 */
export async function sweepUnconfirmed(redis: Redis, keys: RedisKeys, graceSeconds = UNCONFIRMED_GRACE_SECONDS): Promise<number> {
  const { index, events } = journal(keys);
  const perScript = 20;
  let released = 0;
  // Bounded scripts: many lost reservations are released over several calls, not in one long one.
  for (;;) {
    const [reservations, cleared] = (await redis.eval(SWEEP_SCRIPT, 3, index, events, keys.spanBacklog, graceSeconds, perScript)) as [number, number];
    released += cleared;
    if (reservations < perScript) return released;
  }
}
