import slotOf from 'cluster-key-slot';
import type { Redis } from 'ioredis';
import { redisKeys, type RedisKeys } from './keys';
import { waitUntilApplied } from './pending-marks';
import { currentWatermark, takeWatermark } from './sequence';

// Span writes are spread over SPAN_WRITE_SHARDS shards, so that on a Redis Cluster they spread over its
// masters: each shard has its own span-write queue, sequence counter, pending marks, backlog and
// reservation journal, under a hash tag of its own (see spanShardPrefixes), since one Lua script or one
// BullMQ queue must keep to one slot. Every event of a span goes to the shard of its id (`trace_id`), so
// a span's events are numbered by one counter, and its last-writer-wins fields compare numbers that
// mean the same. A trace's spans may be in several shards: what waits for a whole trace or organization
// asks every shard. The first shard is the home prefix, where every other queue and key stays.

export type SpanShard = { prefix: string; keys: RedisKeys };

export function spanShards(prefixes: readonly string[]) {
  const all: SpanShard[] = prefixes.map((prefix) => ({ prefix, keys: redisKeys(prefix) }));
  const indexOf = (traceId: string) => (all.length === 1 ? 0 : slotOf(traceId) % all.length);
  return {
    all,
    indexOf,
    of: (traceId: string) => all[indexOf(traceId)],
    /** The pending sets a read of span `traceId` waits for: its own, and its trace's if it is a root. */
    pendingKeys: (org: string, traceId: string) => [
      all[indexOf(traceId)].keys.pendingSpan(org, traceId),
      ...all.map((shard) => shard.keys.pendingRoot(org, traceId)),
    ],
  };
}
export type SpanShards = ReturnType<typeof spanShards>;

/** `items` by the shard of each one's span, each with its place in `items`. */
export function byShard<T extends { trace_id: string }>(shards: SpanShards, items: readonly T[]) {
  const groups = new Map<number, { items: T[]; at: number[] }>();
  items.forEach((item, at) => {
    const index = shards.indexOf(item.trace_id);
    const group = groups.get(index) ?? { items: [], at: [] };
    group.items.push(item);
    group.at.push(at);
    groups.set(index, group);
  });
  return [...groups].map(([index, group]) => ({ index, ...group }));
}

/** The latest sequence number of each shard: every span event accepted so far is at or below its shard's. */
export const currentWatermarks = (redis: Redis, shards: SpanShards): Promise<number[]> =>
  Promise.all(shards.all.map((shard) => currentWatermark(redis, shard.keys)));

/** A fresh sequence number in each shard, above every span event accepted there so far. */
export const takeWatermarks = (redis: Redis, shards: SpanShards): Promise<number[]> =>
  Promise.all(shards.all.map((shard) => takeWatermark(redis, shard.keys)));

/**
 * Resolves true once none of the organization's events at or below each shard's watermark is pending
 * there, false if `timeoutMs` passes first. A shard without a watermark (one added since they were taken)
 * holds nothing accepted before them.
 */
export function waitUntilAppliedEverywhere(
  redis: Redis,
  shards: SpanShards,
  organizationId: string,
  watermarks: readonly number[],
  timeoutMs: number,
): Promise<boolean> {
  const marks = watermarks.slice(0, shards.all.length).map((watermark, i) => ({ keys: shards.all[i].keys, watermark }));
  return waitUntilApplied(redis, organizationId, marks, timeoutMs);
}
