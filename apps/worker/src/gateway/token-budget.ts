import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { countMessageTokens } from '@sightline/llm';
import type { RedisKeys } from '@sightline/queues';
import type { Lane, LlmRequest } from '@sightline/schemas';
import type { Admission } from './provider-call';

/**
 * Tokens a minute, per lane, counted in Redis for every worker with rate-limiter-flexible (one limiter per
 * limit: the lane is the key it counts under).
 */
export class TokenBudget {
  readonly #redis: Redis;
  readonly #keys: RedisKeys;
  /** The counters, by a lane's tokens a minute. */
  readonly #limiters = new Map<number, RateLimiterRedis>();

  constructor(redis: Redis, keys: RedisKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /**
   * A call's prompt and its reply at most (`max_tokens`), estimated before it goes; once it is done, the
   * tokens its provider reports replace the estimate (the difference is given back or counted too), so
   * that short answers do not hold the lane's tokens for the rest of the minute.
   */
  async admit(lane: Lane, request: LlmRequest): Promise<Admission> {
    if (lane.tpm === null) return { go: true };
    const limiter = this.#limiterFor(lane.tpm);
    const estimate = Math.min(
      countMessageTokens(request.model, request.messages) + (request.params.max_tokens ?? 0),
      lane.tpm,
    );
    try {
      const { msBeforeNext } = await limiter.consume(lane.id, estimate);
      const minuteEnds = Date.now() + msBeforeNext;
      return {
        go: true,
        // Only within the minute the estimate was counted in: a later correction would land in the next
        // minute's count (rate-limiter-flexible counts per fixed window), and a refund there would raise it.
        settle: async (used) => {
          if (used === null || used === estimate || Date.now() >= minuteEnds) return;
          if (used < estimate) await limiter.reward(lane.id, estimate - used);
          else await limiter.penalty(lane.id, used - estimate);
        },
      };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { go: false, waitMs: err.msBeforeNext };
      throw err;
    }
  }

  #limiterFor(tpm: number): RateLimiterRedis {
    let limiter = this.#limiters.get(tpm);
    if (!limiter)
      this.#limiters.set(
        tpm,
        (limiter = new RateLimiterRedis({
          storeClient: this.#redis,
          points: tpm,
          duration: 60,
          keyPrefix: this.#keys.laneTokens,
        })),
      );
    return limiter;
  }
}
