import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys';
import { execAll } from './pending-marks';
import { withScripts } from './scripts';

// A reservation (the numbers the accept script hands out in one call) whose job never reaches the queue
// (Redis or the API node died in between, or the add failed and so did the release) would leave its marks
// for their TTL: reads of its spans would answer 503, and its organization's experiment reads and finishes
// would wait for it, for an hour. So each reservation is kept in a journal until its job is known to be
// queued (confirmReservations), and sweepUnconfirmed takes the marks of one still there after a grace. A
// job queued while its confirmation was lost (the API died just after the add) loses only its
// read-your-writes wait, never data.
const UNCONFIRMED_GRACE_SECONDS = 30;

export const journal = (keys: RedisKeys) => ({
  index: `${keys.seq}:unconfirmed`,
  events: `${keys.seq}:unconfirmed-events`,
});

/**
 * Takes reservations out of the journal once the jobs holding their events are queued (or their marks
 * released). `seqs` may hold any of a reservation's numbers: only its first is in the journal.
 */
export async function confirmReservations(redis: Redis, keys: RedisKeys, seqs: readonly number[]): Promise<void> {
  if (!seqs.length) return;
  const { index, events } = journal(keys);
  await execAll(
    redis
      .pipeline()
      .zrem(index, ...seqs)
      .hdel(events, ...seqs.map(String)),
  );
}

/**
 * Releases the pending marks of reservations still unconfirmed after the grace: their jobs were never
 * queued. Safe to run from several processes at once; answers how many events it released.
 */
export async function sweepUnconfirmed(
  redis: Redis,
  keys: RedisKeys,
  graceSeconds = UNCONFIRMED_GRACE_SECONDS,
): Promise<number> {
  const { index, events } = journal(keys);
  const perScript = 20;
  let released = 0;
  // Bounded scripts: many lost reservations are released over several calls, not in one long one.
  for (;;) {
    const [reservations, cleared] = await withScripts(redis).sweepUnconfirmedLua(
      3,
      index,
      events,
      keys.spanBacklog,
      graceSeconds,
      perScript,
    );
    released += cleared;
    if (reservations < perScript) return released;
  }
}
