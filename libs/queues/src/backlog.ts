import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys';

// The span-write backlog is the sorted set of the sequence numbers of span events accepted and not yet
// written (pending.ts keeps it: the accept script adds, clearPending removes after the commit, or when a
// job fails for good). Events whose job never reached the queue are released by sweepUnconfirmed; those of
// a queue emptied by hand (the dashboard can) would stay until BACKLOG_HORIZON_SECONDS, so
// forgetLostSpanEvents takes them once no job is left.

/** Events younger than this may still be on their way into a job, so they are never taken as lost. */
const IN_FLIGHT_GRACE_SECONDS = 60;

/** Span events accepted and not yet written. */
export function spanBacklog(redis: Redis, keys: RedisKeys): Promise<number> {
  return redis.zcard(keys.spanBacklog);
}

const FORGET_OLDER_THAN = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[1]) * 1000000))`;

/**
 * When no span-write job is left in the queue, takes out of the backlog every event accepted more than a
 * minute ago: none of them can still be written. Safe to run from several processes at once. Answers how
 * many events it removed.
 */
export async function forgetLostSpanEvents(redis: Redis, keys: RedisKeys, spanWrites: Queue): Promise<number> {
  // An event accepted while the counts are read is younger than the grace, so it stays.
  const counts = await spanWrites.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
  if (Object.values(counts).some((c) => c > 0)) return 0;
  return Number(await redis.eval(FORGET_OLDER_THAN, 1, keys.spanBacklog, IN_FLIGHT_GRACE_SECONDS));
}
