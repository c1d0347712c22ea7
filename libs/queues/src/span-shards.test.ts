import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { byShard, spanShards } from './span-shards';

const shards = spanShards(['{p}', '{p:span-1-7}', '{p:span-2-9}']);
const ids = Array.from({ length: 300 }, () => randomUUID());

describe('spanShards', () => {
  it('puts every span in one shard, by its id alone, and spreads spans over all of them', () => {
    for (const id of ids) expect(shards.indexOf(id)).toBe(shards.indexOf(id));
    const used = new Set(ids.map(shards.indexOf));
    expect([...used].sort()).toEqual([0, 1, 2]);
    expect(spanShards(['p']).indexOf(ids[0]!)).toBe(0);
  });

  it("waits for a span in its own shard, and for a trace's spans in every shard", () => {
    const [id] = ids;
    const own = shards.of(id!);
    expect(shards.pendingKeys('org', id!)).toEqual([
      own.keys.pendingSpan('org', id!),
      ...shards.all.map((s) => s.keys.pendingRoot('org', id!)),
    ]);
  });
});

describe('byShard', () => {
  it('groups items by their shard and keeps where each was', () => {
    const items = ids.slice(0, 50).map((trace_id, n) => ({ trace_id, n }));
    const groups = byShard(shards, items);
    expect(groups.flatMap((g) => g.items).length).toBe(items.length);
    for (const group of groups) {
      group.items.forEach((item, i) => {
        expect(shards.indexOf(item.trace_id)).toBe(group.index);
        expect(items[group.at[i]!]).toBe(item);
      });
    }
  });
});
