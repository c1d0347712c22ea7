import type { ChainableCommander, Redis } from 'ioredis';
import type { RedisKeys } from '@sightline/queues';

/** How long a lane's calls queue after its provider refused one for overload. */
const HOT_MS = 60_000;

/**
 * The hot lanes: those whose provider refused a call for overload in the last minute, whose every call
 * then waits in the lane's queue. Shared by every worker in Redis (`keys.lanesHot`, by until when), and
 * read from this process's copy, refreshed at each poll and at each refusal seen here.
 */
export class HotLanes {
  readonly #redis: Redis;
  readonly #keys: RedisKeys;
  /** Until when each hot lane is hot (epoch ms), as last read or marked here. */
  #until = new Map<string, number>();

  constructor(redis: Redis, keys: RedisKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  isHot(laneId: string): boolean {
    return (this.#until.get(laneId) ?? 0) > Date.now();
  }

  /** Reads the hot lanes again, forgetting in Redis the heat that is over. */
  async refresh(now: number): Promise<void> {
    const [hot] = await Promise.all([
      this.#redis.zrangebyscore(this.#keys.lanesHot, now, '+inf', 'WITHSCORES'),
      this.#redis.zremrangebyscore(this.#keys.lanesHot, '-inf', now),
    ]);
    const next = new Map<string, number>();
    for (let i = 0; i < hot.length; i += 2) next.set(hot[i], Number(hot[i + 1]));
    this.#until = next;
  }

  /** The lane's provider refused a call for overload: hot here at once, and in Redis with `marks`. */
  mark(laneId: string, now: number, marks: ChainableCommander): void {
    this.#until.set(laneId, now + HOT_MS);
    marks.zadd(this.#keys.lanesHot, now + HOT_MS, laneId);
  }
}
