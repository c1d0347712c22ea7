import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys';
import { queues } from './registry';

/**
 * The lanes' queues, as every process (API and worker) finds them in Redis: their names, the lanes in use,
 * what each one holds; and the answer of a completion whose time ran out while it waited in one.
 *
 * A lane's queue: the completions of one provider account (see the worker's gateway/lane-scheduler.ts)
 * that wait for its limits or its pause. Its jobs are completion jobs, run as the completion queue's are.
 */
export const laneQueueName = (laneId: string) => `completion-lane-${laneId}`;

/** A lane's provider, as its id starts (the provider's name, then a digest). */
export const laneProvider = (laneId: string) => laneId.slice(0, laneId.lastIndexOf('-'));

/** How long a lane counts as in use after a job was last queued in it: longer than any completion waits. */
export const LANE_IDLE_MS = 10 * 60_000;

export function openLaneQueue(connection: Redis, prefix: string, laneId: string): Queue {
  const queue = new Queue(laneQueueName(laneId), { connection, prefix, defaultJobOptions: queues.completion.options });
  // A queue repeats its shared connection's errors, at every reconnection attempt, and prints each one
  // when nothing listens: the process's watcher of that connection reports an outage, once.
  queue.on('error', () => {});
  return queue;
}

/** The lanes in use. */
export const activeLanes = (redis: Redis, keys: RedisKeys) =>
  redis.zrangebyscore(keys.lanes, Date.now() - LANE_IDLE_MS, '+inf');

/** The completions each lane in use holds, by provider: waiting their turn, and being called. */
export async function readLanes(redis: Redis, keys: RedisKeys, prefix: string) {
  const open = new Map<string, Queue>();
  try {
    return await Promise.all(
      (await activeLanes(redis, keys)).map(async (id) => {
        const queue = open.get(id) ?? openLaneQueue(redis, prefix, id);
        open.set(id, queue);
        const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
        return {
          provider: laneProvider(id),
          waiting: counts.waiting + counts.prioritized + counts.delayed,
          active: counts.active,
        };
      }),
    );
  } finally {
    await Promise.all([...open.values()].map((q) => q.close()));
  }
}

/**
 * The error of a completion whose caller's time budget ran out before it could run: the provider's last
 * refusal when there was one (`refused`), and the provider whose limit it waited for (null: it waited for
 * a worker to take it, not in a lane).
 */
export function budgetRanOut(refused: string | null, provider: string | null): string {
  const why = `this request's time budget ran out while it waited for ${provider ? `${provider}'s limit` : 'a worker'}`;
  return refused ? `${refused} (not tried again: ${why})` : `not called: ${why}`;
}
