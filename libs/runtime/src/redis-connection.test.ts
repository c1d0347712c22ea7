import slotOf from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { spanShardPrefixes } from './redis-connection';

const target = (nodes: number, shards: number) => ({
  REDIS_URL: 'redis://127.0.0.1:6379',
  REDIS_CLUSTER_NODES: Array.from({ length: nodes }, (_, i) => ({ host: '127.0.0.1', port: 7000 + i })),
  QUEUE_PREFIX: 'sightline',
  SPAN_WRITE_SHARDS: shards,
});

describe('spanShardPrefixes', () => {
  it('is the one prefix Sightline always had for one shard', () => {
    expect(spanShardPrefixes(target(0, 1))).toEqual(['sightline']);
    expect(spanShardPrefixes(target(6, 1))).toEqual(['{sightline}']);
  });

  it('adds a prefix a shard on one Redis', () => {
    expect(spanShardPrefixes(target(0, 3))).toEqual(['sightline', 'sightline:span-1', 'sightline:span-2']);
  });

  it("spaces the shards' slots evenly round the cluster's, from the first one's", () => {
    for (const shards of [2, 3, 4, 6]) {
      const prefixes = spanShardPrefixes(target(6, shards));
      expect(prefixes[0]).toBe('{sightline}');
      expect(new Set(prefixes).size).toBe(shards);
      const home = slotOf(prefixes[0]!);
      prefixes.forEach((prefix, i) => {
        expect(prefix).toMatch(/^\{.+\}$/);
        expect(slotOf(prefix)).toBe((home + Math.round((i * 16384) / shards)) % 16384);
      });
    }
  });
});
