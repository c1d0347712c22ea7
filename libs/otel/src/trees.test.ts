import { describe, expect, it } from 'vitest';
import type { MappedSpan } from './conventions';
import { placeInTrees } from './trees';

const ROOT = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa';
const ALIAS = 'aaaaaaaa-aaaa-aaaa-0000-000000000001';
const id = (n: number) => `aaaaaaaa-aaaa-aaaa-0000-00000000000${n}`;
const at = (ms: number) => `2026-01-01T00:00:00.${String(ms).padStart(3, '0')}000Z`;

function spans(): MappedSpan[] {
  return [
    { trace_id: id(3), root_trace_id: ROOT, parent_trace_id: id(2), fields: { start_timestamp: at(30) } },
    { trace_id: id(2), root_trace_id: ROOT, parent_trace_id: ALIAS, fields: { start_timestamp: at(20) } },
    { trace_id: id(4), root_trace_id: ROOT, parent_trace_id: ALIAS, fields: { start_timestamp: at(10) } },
    { trace_id: ROOT, root_trace_id: ROOT, alias: ALIAS, fields: { start_timestamp: at(0) } },
  ];
}
const places = (all: MappedSpan[]) =>
  Object.fromEntries(all.map((s) => [s.trace_id, [s.parent_trace_id ?? null, s.tree?.depth, s.tree?.execution_order]]));

describe('placeInTrees', () => {
  it('points the root’s children at it and places every span as the store would: root, then by start', () => {
    const all = spans();
    placeInTrees(all);
    expect(places(all)).toEqual({
      [ROOT]: [null, 0, 0],
      [id(4)]: [ROOT, 1, 1],
      [id(2)]: [ROOT, 1, 2],
      [id(3)]: [id(2), 2, 3],
    });
  });

  it('places nothing of a trace some of whose spans’ paths leave the request, but still points children at the root', () => {
    const all = [...spans(), { trace_id: id(5), root_trace_id: ROOT, parent_trace_id: id(9), fields: {} }];
    placeInTrees(all);
    expect(all.every((s) => s.tree === undefined)).toBe(true);
    expect(all.find((s) => s.trace_id === id(4))!.parent_trace_id).toBe(ROOT);
    // Only the span whose parent is elsewhere is left for the store to look at.
    expect(all.filter((s) => s.parentElsewhere).map((s) => s.trace_id)).toEqual([id(5)]);
  });

  it('leaves a trace without its root, and a cycle, to the store', () => {
    const rootless = spans().filter((s) => s.trace_id !== ROOT);
    placeInTrees(rootless);
    expect(rootless.map((s) => [s.parent_trace_id, s.tree, s.parentElsewhere])).toEqual([
      [id(2), undefined, undefined],
      [ALIAS, undefined, true],
      [ALIAS, undefined, true],
    ]);
    const cycle = [
      ...spans(),
      { trace_id: id(6), root_trace_id: ROOT, parent_trace_id: id(7), fields: {} },
      { trace_id: id(7), root_trace_id: ROOT, parent_trace_id: id(6), fields: {} },
    ];
    placeInTrees(cycle);
    expect(cycle.every((s) => s.tree === undefined)).toBe(true);
  });
});
