import type { Redis } from 'ioredis';
import { publishInOrder } from '@sightline/runtime';
import type { RedisKeys } from './keys';
import type { Announcement } from './sequence';

/**
 * A worker's answer to an API request waiting on a job: any number of chunks, then exactly one `done`
 * (or `error`). It travels over Redis pub/sub on the job's own channel, which the API subscribes to
 * before it enqueues the job, so nothing is published unseen.
 */
export type Reply<T> =
  | { chunk: string }
  | { done: T }
  /** `retry_after`: seconds until the caller may try again (a refusal by a budget, until its period ends). */
  | { error: string; status?: number; retry_after?: number };

export function createReplier(redis: Redis, keys: RedisKeys, replyTo: string) {
  // Not awaiting each publish keeps chunks in order: one connection sends its commands in order.
  return <T>(reply: Reply<T>) => {
    const { channel, message } = replyAnnouncement(keys, replyTo, reply);
    return publishInOrder(redis, keys.seq, channel, message);
  };
}

/** A reply as the channel and message to publish, for a caller that publishes it with other work. */
export const replyAnnouncement = <T>(keys: RedisKeys, replyTo: string, reply: Reply<T>): Announcement => ({
  channel: keys.replies(replyTo),
  message: JSON.stringify(reply),
});
