import type { Queue } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';
import type { SpanEvent } from '@sightline/schemas';
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
//
// A completion's log is written by the worker that answered it, with no job of its own: its reservation
// keeps the events themselves in the journal (`<first>:log`), in the same script that publishes the answer.
// Once they are written, clearing their marks takes the entry out. A worker that died before (or a write
// that failed and could not be queued either) leaves it there: after the grace, recoverKeptLogs queues the
// events as a span-write job, marks kept, and the sweep leaves such entries to it. So a log is in Redis
// before its caller hears the answer, and is written once (a span is stored once by its id, whoever writes).
const UNCONFIRMED_GRACE_SECONDS = 30;

export const journal = (keys: RedisKeys) => ({
  index: `${keys.seq}:unconfirmed`,
  events: `${keys.seq}:unconfirmed-events`,
});

/**
 * Adds to `pipeline` the removal of reservations from the journal, kept events included. `seqs` may hold
 * any of a reservation's numbers: only its first is in the journal.
 */
export function dropReservations(pipeline: ChainableCommander, keys: RedisKeys, seqs: readonly number[]) {
  if (!seqs.length) return pipeline;
  const { index, events } = journal(keys);
  return pipeline.zrem(index, ...seqs).hdel(events, ...seqs.flatMap((s) => [String(s), `${s}:log`]));
}

/** Takes reservations out of the journal once the jobs holding their events are queued (or their marks released). */
export async function confirmReservations(redis: Redis, keys: RedisKeys, seqs: readonly number[]): Promise<void> {
  if (!seqs.length) return;
  await execAll(dropReservations(redis.pipeline(), keys, seqs));
}

/**
 * Queues, as span-write jobs, the events kept in reservations still in the journal after the grace (their
 * worker did not write them), then takes the reservations out; their marks stay until the jobs are written.
 * A job's id is its reservation's, so two processes recovering at once queue it once. Answers how many
 * events it queued.
 */
export async function recoverKeptLogs(
  redis: Redis,
  keys: RedisKeys,
  spanWrites: Queue,
  graceSeconds = UNCONFIRMED_GRACE_SECONDS,
): Promise<number> {
  const { index, events } = journal(keys);
  const [seconds, micros] = await redis.time();
  const cutoff = Number(seconds) * 1e6 + Number(micros) - graceSeconds * 1e6;
  const page = 100;
  let queued = 0;
  for (let after = '-inf'; ;) {
    const firsts = await redis.zrangebyscore(index, after, cutoff, 'LIMIT', 0, page);
    if (!firsts.length) return queued;
    const kept = await redis.hmget(events, ...firsts.map((f) => `${f}:log`));
    const jobs: { first: string; events: SpanEvent[] }[] = [];
    const unreadable: string[] = [];
    firsts.forEach((first, i) => {
      const json = kept[i];
      if (json === null) return;
      try {
        const logged = JSON.parse(json) as Omit<SpanEvent, 'seq'>[];
        jobs.push({ first, events: logged.map((e, n) => ({ ...e, seq: Number(first) + n }) as SpanEvent) });
      } catch {
        // Left to the sweep, which releases its marks like those of any reservation without a job.
        unreadable.push(`${first}:log`);
      }
    });
    if (jobs.length)
      await spanWrites.addBulk(
        jobs.map((j) => ({ name: 'span-write', data: { events: j.events }, opts: { jobId: `kept-${j.first}` } })),
      );
    const pipeline = dropReservations(
      redis.pipeline(),
      keys,
      jobs.map((j) => Number(j.first)),
    );
    if (unreadable.length) pipeline.hdel(events, ...unreadable);
    if (jobs.length || unreadable.length) await execAll(pipeline);
    queued += jobs.reduce((n, j) => n + j.events.length, 0);
    if (firsts.length < page) return queued;
    after = `(${firsts.at(-1)}`;
  }
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
    const [reservations, cleared, kept] = await withScripts(redis).sweepUnconfirmedLua(
      3,
      index,
      events,
      keys.spanBacklog,
      graceSeconds,
      perScript,
    );
    released += cleared;
    // Reservations keeping their events (recoverKeptLogs' to queue) stay in the journal, first in line: the
    // rest waits for the next sweep.
    if (reservations < perScript || kept > 0) return released;
  }
}
