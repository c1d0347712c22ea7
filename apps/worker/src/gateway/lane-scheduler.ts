import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { readLanes, type QueuePayload, type RedisKeys } from '@sightline/queues';
import { providerLimitWaitSeconds, repeat, watchLanes } from '@sightline/runtime';
import { AdaptiveConcurrency } from './adaptive-concurrency';
import type { CallsInFlight } from './calls-in-flight';
import { HotLanes } from './hot-lanes';
import type { Gate, Requeue } from './index';
import { isLimited } from './lane-config';
import { LANE_POLL_MS, LaneWorkers, type LaneWorkersDeps } from './lane-workers';
import { TokenBudget } from './token-budget';

type CompletionJob = QueuePayload<'completion'>;

/** The wait after an overload without Retry-After: doubled with each refusal of the same job, up to MAX. */
const BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

const overloadsOf = (job: CompletionJob) => job.overloads ?? 0;
/** The wait after this job's overloads when the provider gave no Retry-After. */
const backoffMs = (overloads: number) => Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** overloads);

type LaneSchedulerDeps = {
  redis: Redis;
  prefix: string;
  keys: RedisKeys;
  log: Logger;
  /** The provider calls this process is making, counted by the gateway. */
  callsInFlight: CallsInFlight;
  /** Starts this process's worker on a lane's queue. */
  startWorker: LaneWorkersDeps['startWorker'];
};

/**
 * Lanes: a provider account's completions, queued so that they keep to its limits across every worker.
 *
 * A completion goes straight to its provider unless its lane has limits (a saved key's, or the server's
 * `<PROVIDER>_MAX_CONCURRENT`, `_RPM`, `_TPM`) or its provider refused a call for overload in the last
 * minute (hot-lanes.ts): then it is moved to the lane's own BullMQ queue (lane-workers.ts), where BullMQ
 * keeps the limits in Redis for all workers (global concurrency, global rate limit) and a job waits without
 * holding a worker's slot. Tokens a minute are counted apart (token-budget.ts). An overload (429, 503, 529)
 * pauses the lane for every worker for its Retry-After (`queue.rateLimit`) and puts the job back at the
 * head of its queue; a lane without a configured concurrency learns one (adaptive-concurrency.ts).
 *
 * The scheduler owns those parts and polls for the lanes in use and the hot ones until `close`.
 */
export class LaneScheduler {
  readonly #redis: Redis;
  readonly #keys: RedisKeys;
  readonly #hot: HotLanes;
  readonly #workers: LaneWorkers;
  readonly #adaptive: AdaptiveConcurrency;
  readonly #tokens: TokenBudget;
  readonly #stopPolling: () => void;
  readonly #unwatch: () => void;

  constructor({ redis, prefix, keys, log, callsInFlight, startWorker }: LaneSchedulerDeps) {
    this.#redis = redis;
    this.#keys = keys;
    this.#hot = new HotLanes(redis, keys);
    this.#workers = new LaneWorkers({ redis, prefix, keys, hot: this.#hot, startWorker });
    this.#adaptive = new AdaptiveConcurrency({ redis, keys, log, hot: this.#hot, callsInFlight });
    this.#tokens = new TokenBudget(redis, keys);
    this.#stopPolling = repeat(
      () => this.#poll(),
      LANE_POLL_MS,
      (err) => log.warn({ err: (err as Error).message }, 'lane poll failed'),
    );
    this.#unwatch = watchLanes(() => readLanes(redis, keys, prefix));
  }

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
          return this.#tokens.admit(lane, request);
        }
        return isLimited(lane) || this.#hot.isHot(lane.id) ? { go: false, waitMs: null } : { go: true };
      },
      refused: (lane, retryAfterMs, error) =>
        this.#overloaded(
          this.#workers.queue(lane.id),
          job,
          { lane, waitMs: retryAfterMs ?? backoffMs(overloadsOf(job)), error, overload: true },
          true,
        ),
    };
  }

  /** Moves a job to its lane's queue (from the completion queue, or a route's from another target's lane). */
  async forward(job: CompletionJob, requeue: Requeue): Promise<void> {
    const queue = this.#workers.queue(requeue.lane.id);
    if (requeue.overload) await this.#overloaded(queue, job, requeue);
    await this.#workers.applyLimits(requeue.lane);
    const overloads = overloadsOf(job) + (requeue.overload ? 1 : 0);
    const moved = {
      ...job,
      lane: requeue.lane,
      lane_queued_ms: Date.now(),
      overloads,
      route_progress: requeue.route,
    };
    await Promise.all([
      queue.add('completion', moved),
      this.#redis.zadd(this.#keys.lanes, Date.now(), requeue.lane.id),
    ]);
    this.#workers.open(requeue.lane.id);
  }

  /** The provider refused a call that is answered with its refusal: the pause holds for the lane's other calls. */
  refused(job: CompletionJob, refusal: Requeue): Promise<void> {
    return this.#overloaded(this.#workers.queue(refusal.lane.id), job, refusal);
  }

  /**
   * Pauses a lane's queue for `waitMs` for every worker, before its job goes back to the head of it (by
   * the processor's throwing BullMQ's RateLimitError).
   */
  async pause(job: CompletionJob, bullJob: Job, requeue: Requeue): Promise<void> {
    const queue = this.#workers.queue(requeue.lane.id);
    if (requeue.overload) await this.#overloaded(queue, job, requeue);
    else if (requeue.waitMs > 0) await queue.rateLimit(requeue.waitMs);
    if (requeue.overload || requeue.route)
      await bullJob.updateData({
        ...job,
        overloads: overloadsOf(job) + (requeue.overload ? 1 : 0),
        route_progress: requeue.route,
      });
  }

  /** A lane's job was answered: its wait is counted, and a learned concurrency may grow. */
  async answered(job: CompletionJob, callSeconds: number): Promise<void> {
    if (!job.lane) return;
    if (job.lane_queued_ms) {
      const waited = (Date.now() - job.lane_queued_ms) / 1000 - callSeconds;
      providerLimitWaitSeconds.inc({ provider: job.lane.provider }, Math.max(0, waited));
    }
    await this.#adaptive.grow(this.#workers.queue(job.lane.id), job.lane);
  }

  /** The provider's last overload message for a job that waited, if any. */
  waitError(job: CompletionJob): Promise<string | null> {
    return this.#redis.get(this.#keys.laneWaitError(job.reply_to));
  }

  async close(): Promise<void> {
    this.#stopPolling();
    this.#unwatch();
    await this.#workers.close();
  }

  /** Finds the lanes in use (opening this process's worker on each) and the hot ones. */
  async #poll(): Promise<void> {
    const now = Date.now();
    const [ids] = await Promise.all([this.#workers.inUse(now), this.#hot.refresh(now)]);
    await this.#workers.sync(ids, now);
  }

  /**
   * The provider refused a call for overload: the lane's calls queue for the next minute, the lane pauses
   * for every worker for the provider's Retry-After, a learned concurrency is cut (once per pause), and
   * the caller's answer at its deadline will carry the provider's message (unless `movedOn`: a route
   * went on to its next target, whose wait is not this provider's doing).
   */
  async #overloaded(queue: Queue, job: CompletionJob, requeue: Requeue, movedOn = false): Promise<void> {
    const { lane } = requeue;
    const now = Date.now();
    const marks = this.#redis.multi();
    this.#hot.mark(lane.id, now, marks);
    if (!movedOn) {
      const ttl = Math.max(1, (job.deadline_ms ?? now) - now + 60_000);
      marks.set(this.#keys.laneWaitError(job.reply_to), requeue.error ?? 'overloaded', 'PX', ttl);
    }
    await marks.exec();
    if (requeue.waitMs > 0) await queue.rateLimit(requeue.waitMs);
    await this.#adaptive.cut(queue, lane, Math.max(requeue.waitMs, BACKOFF_MS));
  }
}
