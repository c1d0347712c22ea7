import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys';
import { withScripts } from './scripts';

// The span-write backlog is one more sorted set of the sequence numbers of span events accepted and not
// yet written, across organizations. The accept script (sequence.ts) adds to it and reads its size in
// O(1), so the bound costs no extra round trip and no request slips past it between a check and an accept;
// clearPending removes events after their commit, or when their job failed for good. Removal by member is
// idempotent, so a redelivered job cannot make the count drift. Events whose job never reached the queue
// are released by sweepUnconfirmed (reservations.ts). Those whose job was queued and then lost are taken by
// forgetLostSpanEvents once no job is left: a queue emptied by hand (the dashboard can), or a failover that
// lost a queued job while the new master kept its marks. Any others go after BACKLOG_HORIZON_SECONDS.
export const BACKLOG_HORIZON_SECONDS = 24 * 3600;

/** Events younger than this may still be on their way into a job, so they are never taken as lost. */
const IN_FLIGHT_GRACE_SECONDS = 60;

/**
 * When no span-write job is left in the queue, takes out of the backlog every event accepted more than
 * `graceSeconds` ago (a minute): none of them can still be written. Their pending marks are released next,
 * by releaseForgottenMarks. Safe to run from several processes at once. Answers how many events it removed.
 */
export async function forgetLostSpanEvents(
  redis: Redis,
  keys: RedisKeys,
  spanWrites: Queue,
  graceSeconds = IN_FLIGHT_GRACE_SECONDS,
): Promise<number> {
  // An event accepted while the counts are read is younger than the grace, so it stays.
  const counts = await spanWrites.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
  if (Object.values(counts).some((c) => c > 0)) return 0;
  return Number(
    await withScripts(redis).forgetLostSpanEventsLua(2, keys.spanBacklog, keys.backlogForgotten, graceSeconds),
  );
}
