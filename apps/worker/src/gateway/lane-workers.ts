import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { activeLanes, LANE_IDLE_MS, laneQueueName, openLaneQueue, type RedisKeys } from '@sightline/queues';
import type { Lane } from '@sightline/schemas';
import type { HotLanes } from './hot-lanes';

/** How often each worker process looks for lanes in use (to run their jobs) and for hot ones. */
export const LANE_POLL_MS = 500;
/** The rate limit a lane worker runs with when its lane has none: BullMQ pauses a queue only with one. */
const NO_RATE_LIMIT = { max: 1_000_000_000, duration: 60_000 };

/** The rate limit a lane's worker starts with (see NO_RATE_LIMIT). */
type WorkerLimiter = typeof NO_RATE_LIMIT;

export type LaneWorkersDeps = {
  redis: Redis;
  prefix: string;
  keys: RedisKeys;
  hot: HotLanes;
  /** Starts this process's worker on a lane's queue. */
  startWorker: (queueName: string, limiter: WorkerLimiter) => Worker;
};

/**
 * A lane's queue as this process holds it: the queue, this process's worker on it (once the lane is in
 * use), the limits last applied to the queue (`applied`), and the lane they came from.
 */
type LaneEntry = { queue: Queue; worker: Worker | null; applied: string | null; lane: Lane | null; openedAt: number };

/**
 * This process's side of the lanes' queues: each lane's BullMQ queue, this process's worker on each lane
 * in use (opened as lanes come into use, closed as they go out of it), and the lane's limits kept on its
 * queue, where BullMQ keeps them in Redis for every worker (global concurrency, global rate limit).
 */
export class LaneWorkers {
  readonly #deps: LaneWorkersDeps;
  readonly #entries = new Map<string, LaneEntry>();
  #closing = false;

  constructor(deps: LaneWorkersDeps) {
    this.#deps = deps;
  }

  /** The lane's queue, opened here if it was not. */
  queue(laneId: string): Queue {
    return this.#entry(laneId).queue;
  }

  /** The lane's queue, with this process's worker on it (unless closing). */
  open(laneId: string): Queue {
    const entry = this.#entry(laneId);
    if (!this.#closing) entry.worker ??= this.#deps.startWorker(laneQueueName(laneId), NO_RATE_LIMIT);
    return entry.queue;
  }

  /** The lane's configured limits on its queue, when they changed; a learned concurrency ends with its heat. */
  async applyLimits(lane: Lane): Promise<void> {
    const entry = this.#entry(lane.id);
    entry.lane = lane;
    const hot = this.#deps.hot.isHot(lane.id);
    const wanted = JSON.stringify([lane.max_concurrent, lane.rpm, hot]);
    if (entry.applied === wanted) return;
    if (lane.max_concurrent !== null) await entry.queue.setGlobalConcurrency(lane.max_concurrent);
    else if (!hot) await entry.queue.removeGlobalConcurrency();
    if (lane.rpm !== null) await entry.queue.setGlobalRateLimit(lane.rpm, 60_000);
    else await entry.queue.removeGlobalRateLimit();
    entry.applied = wanted;
  }

  /** The lanes in use, forgetting in Redis those out of use. */
  async inUse(now: number): Promise<string[]> {
    const { redis, keys } = this.#deps;
    const [ids] = await Promise.all([
      activeLanes(redis, keys),
      redis.zremrangebyscore(keys.lanes, '-inf', now - LANE_IDLE_MS),
    ]);
    return ids;
  }

  /**
   * Opens this process's worker on each lane in use (`ids`, read at `now`), its limits applied again, and
   * closes the queues of the others.
   */
  async sync(ids: string[], now: number): Promise<void> {
    for (const id of ids) {
      this.open(id);
      const { lane } = this.#entry(id);
      if (lane) await this.applyLimits(lane);
    }
    // A lane opened since the reading above is not in it yet.
    for (const [id, entry] of this.#entries)
      if (!ids.includes(id) && entry.openedAt < now - LANE_POLL_MS) {
        this.#entries.delete(id);
        await entry.worker?.close();
        await entry.queue.close();
      }
  }

  /** Closes every worker, then every queue; no worker opens after. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#entries.values()].map((e) => e.worker?.close()));
    // Read again: a job that ended meanwhile may have moved to another lane, opening its queue.
    await Promise.all([...this.#entries.values()].map((e) => e.queue.close()));
    this.#entries.clear();
  }

  #entry(laneId: string): LaneEntry {
    let entry = this.#entries.get(laneId);
    if (!entry) {
      const queue = openLaneQueue(this.#deps.redis, this.#deps.prefix, laneId);
      entry = { queue, worker: null, applied: null, lane: null, openedAt: Date.now() };
      this.#entries.set(laneId, entry);
    }
    return entry;
  }
}
