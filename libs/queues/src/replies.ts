import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys';

/**
 * A worker's answer to an API request waiting on a job: any number of chunks, then exactly one `done`
 * (or `error`). It travels over Redis pub/sub on the job's own channel, which the API subscribes to
 * before it enqueues the job, so nothing is published unseen.
 */
export type Reply<T> = { chunk: string } | { done: T } | { error: string; status?: number };

export function createReplier(redis: Redis, keys: RedisKeys, replyTo: string) {
  const channel = keys.replies(replyTo);
  // Not awaiting each publish keeps chunks in order: one connection sends its commands in order.
  return <T>(reply: Reply<T>) => redis.publish(channel, JSON.stringify(reply));
}
