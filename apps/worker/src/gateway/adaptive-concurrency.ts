import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisKeys } from '@sightline/queues';
import type { Lane } from '@sightline/schemas';
import type { CallsInFlight } from './calls-in-flight';
import type { HotLanes } from './hot-lanes';

/**
 * A learned concurrency grows by one this often while its provider refuses nothing, and shrinks to this
 * share of itself at each pause (additive increase, multiplicative decrease, as TCP's congestion control).
 */
const GROW_EVERY_MS = 1_000;
const SHRINK_TO = 0.7;

type AdaptiveConcurrencyDeps = {
  redis: Redis;
  keys: RedisKeys;
  log: Logger;
  hot: HotLanes;
  callsInFlight: CallsInFlight;
};

/**
 * The concurrency a hot lane without a configured one learns, kept on its queue for every worker (BullMQ's
 * global concurrency): cut at each pause, grown by one every second while its provider refuses nothing.
 * Redis keys (`keys.laneAdapted`) make each change once per pause, or per second, across all workers.
 */
export class AdaptiveConcurrency {
  readonly #deps: AdaptiveConcurrencyDeps;

  constructor(deps: AdaptiveConcurrencyDeps) {
    this.#deps = deps;
  }

  /**
   * The lane's provider refused a call for overload and the lane pauses for `pauseMs`: its learned
   * concurrency is cut, once per pause.
   */
  async cut(queue: Queue, lane: Lane, pauseMs: number): Promise<void> {
    if (lane.max_concurrent !== null) return;
    const { redis, keys, log, callsInFlight } = this.#deps;
    const cut = await redis.set(keys.laneAdapted(lane.id, 'down'), '1', 'PX', pauseMs, 'NX');
    if (!cut) return;
    await redis.set(keys.laneAdapted(lane.id, 'up'), '1', 'PX', pauseMs + GROW_EVERY_MS);
    // First refused: the calls this process has in flight on the lane stand for what the provider took.
    const current = (await queue.getGlobalConcurrency()) ?? (callsInFlight.count(lane.id) || 1) / SHRINK_TO;
    const learned = Math.max(1, Math.floor(current * SHRINK_TO));
    await queue.setGlobalConcurrency(learned);
    log.warn(
      { lane: lane.id, provider: lane.provider, concurrency: learned },
      'provider overloaded: lane concurrency lowered',
    );
  }

  /** A call on a hot lane without a configured concurrency went through: its learned one may grow. */
  async grow(queue: Queue, lane: Lane): Promise<void> {
    if (lane.max_concurrent !== null || !this.#deps.hot.isHot(lane.id)) return;
    const { redis, keys } = this.#deps;
    if (!(await redis.set(keys.laneAdapted(lane.id, 'up'), '1', 'PX', GROW_EVERY_MS, 'NX'))) return;
    const current = await queue.getGlobalConcurrency();
    if (current !== null) await queue.setGlobalConcurrency(current + 1);
  }
}
