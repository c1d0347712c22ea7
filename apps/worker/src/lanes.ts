import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { countMessageTokens } from '@sightline/llm';
import {
  activeLanes,
  LANE_IDLE_MS,
  laneQueueName,
  openLaneQueue,
  readLanes,
  type QueuePayload,
  type RedisKeys,
} from '@sightline/queues';
import { providerLimitWaitSeconds, repeat, watchLanes } from '@sightline/runtime';
import type { Lane, LlmRequest } from '@sightline/schemas';
import type { Gate, Requeue } from './gateway';
import { isLimited } from './gateway/lane';
import { laneCallsInFlight, type Admission } from './gateway/provider-call';

type CompletionJob = QueuePayload<'completion'>;

/** How often each worker process looks for lanes in use (to run their jobs) and for hot ones. */
const POLL_MS = 500;
/** How long a lane's calls queue after its provider refused one for overload. */
const HOT_MS = 60_000;
/** The wait after an overload without Retry-After: doubled with each refusal of the same job, up to MAX. */
const BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/**
 * A learned concurrency grows by one this often while its provider refuses nothing, and shrinks to this
 * share of itself at each pause (additive increase, multiplicative decrease, as TCP's congestion control).
 */
const GROW_EVERY_MS = 1_000;
const SHRINK_TO = 0.7;
/** The rate limit a lane worker runs with when its lane has none: BullMQ pauses a queue only with one. */
const NO_RATE_LIMIT = { max: 1_000_000_000, duration: 60_000 };

const overloadsOf = (job: CompletionJob) => job.overloads ?? 0;
/** The wait after this job's overloads when the provider gave no Retry-After. */
const backoffMs = (overloads: number) => Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** overloads);

type LaneDeps = {
  redis: Redis;
  prefix: string;
  keys: RedisKeys;
  log: Logger;
  /** Starts this process's worker on a lane's queue. */
  startWorker: (queueName: string) => Worker;
};

/**
 * Lanes: a provider account's completions, queued so that they keep to its limits across every worker.
 *
 * A completion goes straight to its provider unless its lane has limits (a saved key's, or the server's
 * `<PROVIDER>_MAX_CONCURRENT`, `_RPM`, `_TPM`) or its provider refused a call for overload in the last
 * minute: then it is moved to the lane's own BullMQ queue, where BullMQ keeps the limits in Redis for all
 * workers (global concurrency, global rate limit) and a job waits without holding a worker's slot. Tokens
 * a minute are counted with rate-limiter-flexible. An overload (429, 503, 529) pauses the lane for every
 * worker for its Retry-After (`queue.rateLimit`) and puts the job back at the head of its queue; a lane
 * without a configured concurrency learns one (cut at each pause, grown by one every second).
 */
export function createLanes({ redis, prefix, keys, log, startWorker }: LaneDeps) {
  type Entry = { queue: Queue; worker: Worker | null; applied: string | null; lane: Lane | null; openedAt: number };
  const entries = new Map<string, Entry>();
  let hotUntil = new Map<string, number>();
  const tokenLimiters = new Map<number, RateLimiterRedis>();

  const entryOf = (id: string): Entry => {
    let entry = entries.get(id);
    if (!entry)
      entries.set(
        id,
        (entry = {
          queue: openLaneQueue(redis, prefix, id),
          worker: null,
          applied: null,
          lane: null,
          openedAt: Date.now(),
        }),
      );
    return entry;
  };
  let closing = false;
  const open = (id: string) => {
    const entry = entryOf(id);
    if (!closing) entry.worker ??= startWorker(laneQueueName(id));
    return entry;
  };
  const isHot = (id: string) => (hotUntil.get(id) ?? 0) > Date.now();

  /** The lane's configured limits on its queue, when they changed; a learned concurrency ends with its heat. */
  async function configure(entry: Entry, lane: Lane) {
    entry.lane = lane;
    const wanted = JSON.stringify([lane.max_concurrent, lane.rpm, isHot(lane.id)]);
    if (entry.applied === wanted) return;
    if (lane.max_concurrent !== null) await entry.queue.setGlobalConcurrency(lane.max_concurrent);
    else if (!isHot(lane.id)) await entry.queue.removeGlobalConcurrency();
    if (lane.rpm !== null) await entry.queue.setGlobalRateLimit(lane.rpm, 60_000);
    else await entry.queue.removeGlobalRateLimit();
    entry.applied = wanted;
  }

  /** Finds the lanes in use (opening this process's worker on each) and the hot ones. */
  async function poll() {
    const now = Date.now();
    const [ids, hot] = await Promise.all([
      activeLanes(redis, keys),
      redis.zrangebyscore(keys.lanesHot, now, '+inf', 'WITHSCORES'),
      // Lanes out of use, and heat that is over, are forgotten.
      redis.zremrangebyscore(keys.lanes, '-inf', now - LANE_IDLE_MS),
      redis.zremrangebyscore(keys.lanesHot, '-inf', now),
    ]);
    const next = new Map<string, number>();
    for (let i = 0; i < hot.length; i += 2) next.set(hot[i], Number(hot[i + 1]));
    hotUntil = next;
    for (const id of ids) {
      const entry = open(id);
      if (entry.lane) await configure(entry, entry.lane);
    }
    // A lane opened since the reading above is not in it yet.
    for (const [id, entry] of entries)
      if (!ids.includes(id) && entry.openedAt < now - POLL_MS) {
        entries.delete(id);
        await entry.worker?.close();
        await entry.queue.close();
      }
  }

  /**
   * The provider refused a call for overload: the lane's calls queue for the next minute, the lane pauses
   * for every worker for the provider's Retry-After, a learned concurrency is cut (once per pause), and
   * the caller's answer at its deadline will carry the provider's message (unless `movedOn`: a route
   * went on to its next target, whose wait is not this provider's doing).
   */
  async function overloaded(entry: Entry, job: CompletionJob, requeue: Requeue, movedOn = false) {
    const { lane } = requeue;
    const now = Date.now();
    hotUntil.set(lane.id, now + HOT_MS);
    const marks = redis.multi().zadd(keys.lanesHot, now + HOT_MS, lane.id);
    if (!movedOn) {
      const ttl = Math.max(1, (job.deadline_ms ?? now) - now + 60_000);
      marks.set(keys.laneWaitError(job.reply_to), requeue.error ?? 'overloaded', 'PX', ttl);
    }
    await marks.exec();
    if (requeue.waitMs > 0) await entry.queue.rateLimit(requeue.waitMs);
    if (lane.max_concurrent !== null) return;
    const pause = Math.max(requeue.waitMs, BACKOFF_MS);
    const cut = await redis.set(keys.laneAdapted(lane.id, 'down'), '1', 'PX', pause, 'NX');
    if (!cut) return;
    await redis.set(keys.laneAdapted(lane.id, 'up'), '1', 'PX', pause + GROW_EVERY_MS);
    // First refused: the calls this process has in flight on the lane stand for what the provider took.
    const current = (await entry.queue.getGlobalConcurrency()) ?? (laneCallsInFlight.get(lane.id) ?? 1) / SHRINK_TO;
    const learned = Math.max(1, Math.floor(current * SHRINK_TO));
    await entry.queue.setGlobalConcurrency(learned);
    log.warn(
      { lane: lane.id, provider: lane.provider, concurrency: learned },
      'provider overloaded: lane concurrency lowered',
    );
  }

  /** A call on a hot lane without a configured concurrency went through: its learned one may grow. */
  async function grow(entry: Entry, lane: Lane) {
    if (lane.max_concurrent !== null || !isHot(lane.id)) return;
    if (!(await redis.set(keys.laneAdapted(lane.id, 'up'), '1', 'PX', GROW_EVERY_MS, 'NX'))) return;
    const current = await entry.queue.getGlobalConcurrency();
    if (current !== null) await entry.queue.setGlobalConcurrency(current + 1);
  }

  /**
   * Tokens a minute: the call's prompt and its reply at most (`max_tokens`), estimated before it goes; once
   * it is done, the tokens its provider reports replace the estimate (the difference is given back or
   * counted too), so that short answers do not hold the lane's tokens for the rest of the minute.
   */
  async function admitTokens(lane: Lane, request: LlmRequest): Promise<Admission> {
    if (lane.tpm === null) return { go: true };
    let limiter = tokenLimiters.get(lane.tpm);
    if (!limiter)
      tokenLimiters.set(
        lane.tpm,
        (limiter = new RateLimiterRedis({
          storeClient: redis,
          points: lane.tpm,
          duration: 60,
          keyPrefix: keys.laneTokens,
        })),
      );
    const estimate = Math.min(
      countMessageTokens(request.model, request.messages) + (request.params.max_tokens ?? 0),
      lane.tpm,
    );
    try {
      const counted = limiter;
      const { msBeforeNext } = await counted.consume(lane.id, estimate);
      const minuteEnds = Date.now() + msBeforeNext;
      return {
        go: true,
        // Only within the minute the estimate was counted in: a later correction would land in the next
        // minute's count (rate-limiter-flexible counts per fixed window), and a refund there would raise it.
        settle: async (used) => {
          if (used === null || used === estimate || Date.now() >= minuteEnds) return;
          if (used < estimate) await counted.reward(lane.id, estimate - used);
          else await counted.penalty(lane.id, used - estimate);
        },
      };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { go: false, waitMs: err.msBeforeNext };
      throw err;
    }
  }

  const stopPolling = repeat(poll, POLL_MS, (err) => log.warn({ err: (err as Error).message }, 'lane poll failed'));
  const unwatch = watchLanes(() => readLanes(redis, keys, prefix));

  return {
    /**
     * How a job's calls keep to their lanes: a call on the lane the job waits in was admitted by BullMQ under
     * the lane's limits (tokens a minute are counted here); a call on any other lane (a job from the
     * completion queue, or a route's next target) goes only if that lane has no limits and is not hot, and
     * otherwise waits in that lane's queue.
     */
    gate(deadline: number, job: CompletionJob): Gate {
      // BullMQ admitted the job once: for one call. A route's later target on the same lane waits its turn.
      let admitted = false;
      return {
        deadline,
        backoffMs: backoffMs(overloadsOf(job)),
        admit: async (lane, request) => {
          if (lane.id === job.lane?.id && !admitted) {
            admitted = true;
            return admitTokens(lane, request);
          }
          return isLimited(lane) || isHot(lane.id) ? { go: false, waitMs: null } : { go: true };
        },
        refused: (lane, retryAfterMs, error) =>
          overloaded(
            entryOf(lane.id),
            job,
            { lane, waitMs: retryAfterMs ?? backoffMs(overloadsOf(job)), error, overload: true },
            true,
          ),
      };
    },
    /** Moves a job to its lane's queue (from the completion queue, or a route's from another target's lane). */
    async forward(job: CompletionJob, requeue: Requeue) {
      const entry = entryOf(requeue.lane.id);
      if (requeue.overload) await overloaded(entry, job, requeue);
      await configure(entry, requeue.lane);
      const overloads = overloadsOf(job) + (requeue.overload ? 1 : 0);
      const moved = {
        ...job,
        lane: requeue.lane,
        lane_queued_ms: Date.now(),
        overloads,
        route_progress: requeue.route,
      };
      await Promise.all([entry.queue.add('completion', moved), redis.zadd(keys.lanes, Date.now(), requeue.lane.id)]);
      open(requeue.lane.id);
    },
    /** The provider refused a call that is answered with its refusal: the pause holds for the lane's other calls. */
    refused: (job: CompletionJob, refusal: Requeue) => overloaded(entryOf(refusal.lane.id), job, refusal),
    /**
     * Pauses a lane's queue for `waitMs` for every worker, before its job goes back to the head of it (by
     * the processor's throwing BullMQ's RateLimitError).
     */
    async pause(job: CompletionJob, bullJob: Job, requeue: Requeue) {
      const entry = entryOf(requeue.lane.id);
      if (requeue.overload) await overloaded(entry, job, requeue);
      else if (requeue.waitMs > 0) await entry.queue.rateLimit(requeue.waitMs);
      if (requeue.overload || requeue.route)
        await bullJob.updateData({
          ...job,
          overloads: overloadsOf(job) + (requeue.overload ? 1 : 0),
          route_progress: requeue.route,
        });
    },
    /** A lane's job was answered: its wait is counted, and a learned concurrency may grow. */
    async answered(job: CompletionJob, callSeconds: number) {
      if (!job.lane) return;
      if (job.lane_queued_ms) {
        const waited = (Date.now() - job.lane_queued_ms) / 1000 - callSeconds;
        providerLimitWaitSeconds.inc({ provider: job.lane.provider }, Math.max(0, waited));
      }
      await grow(entryOf(job.lane.id), job.lane);
    },
    /** The provider's last overload message for a job that waited, if any. */
    waitError: (job: CompletionJob) => redis.get(keys.laneWaitError(job.reply_to)),
    limiter: NO_RATE_LIMIT,
    async close() {
      closing = true;
      stopPolling();
      unwatch();
      await Promise.all([...entries.values()].map((e) => e.worker?.close()));
      // Read again: a job that ended meanwhile may have moved to another lane, opening its queue.
      await Promise.all([...entries.values()].map((e) => e.queue.close()));
      entries.clear();
    },
  };
}
export type Lanes = ReturnType<typeof createLanes>;
