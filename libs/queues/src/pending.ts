import type { Redis } from 'ioredis';
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

const ACCEPT_SCRIPT = `
local n = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
-- Never below the clock: a Redis that lost the counter still hands out increasing numbers.
local seq = math.max(now, last + 1)
redis.call('SET', KEYS[1], string.format('%d', seq + n - 1))
local out = {}
local orgs = {}
for i = 1, n do
  local s = string.format('%d', seq + i - 1)
  out[i] = s
  for _, k in ipairs({KEYS[3 * i - 1], KEYS[3 * i]}) do
    if k ~= '' then
      redis.call('SADD', k, s)
      redis.call('EXPIRE', k, ${PENDING_TTL_SECONDS})
    end
  end
  local org = KEYS[3 * i + 1]
  redis.call('ZADD', org, s, s)
  orgs[org] = true
end
for org in pairs(orgs) do
  redis.call('ZREMRANGEBYSCORE', org, '-inf', string.format('%d', now - ${PENDING_TTL_SECONDS} * 1000000))
  redis.call('EXPIRE', org, ${PENDING_TTL_SECONDS})
end
return out
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    acceptSpanEvents(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
  }
}

type Accepting = { organization_id: string; trace_id: string; pending_root?: string };

export async function takeSequenceNumbers(redis: Redis, keys: RedisKeys, events: readonly Accepting[]): Promise<number[]> {
  const eventKeys = events.flatMap((e) => [
    keys.pendingSpan(e.organization_id, e.trace_id),
    e.pending_root ? keys.pendingRoot(e.organization_id, e.pending_root) : '',
    keys.pendingOrganization(e.organization_id),
  ]);
  if (!redis.acceptSpanEvents) redis.defineCommand('acceptSpanEvents', { lua: ACCEPT_SCRIPT });
  // defineCommand sends EVALSHA, and the script text only when Redis does not have it yet.
  const seqs = await redis.acceptSpanEvents(1 + eventKeys.length, keys.seq, ...eventKeys, events.length);
  return seqs.map(Number);
}

export async function clearPending(redis: Redis, keys: RedisKeys, events: readonly SpanEvent[]): Promise<void> {
  const pipeline = redis.pipeline();
  for (const e of events) {
    pipeline.srem(keys.pendingSpan(e.organization_id, e.trace_id), e.seq);
    if (e.pending_root) pipeline.srem(keys.pendingRoot(e.organization_id, e.pending_root), e.seq);
    pipeline.zrem(keys.pendingOrganization(e.organization_id), e.seq);
  }
  await pipeline.exec();
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
