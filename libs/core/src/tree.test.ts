import { describe, expect, it } from 'vitest';
import { buildTrees, type FlatSpan } from './tree';

const span = (trace_id: string, parent_trace_id: string, execution_order: number | null, start = '2026-01-01 00:00:00'): FlatSpan => ({
  trace_id,
  parent_trace_id,
  execution_order,
  start_timestamp: start,
});

describe('buildTrees', () => {
  it('nests children ordered by execution_order, then start time', () => {
    const rows = [
      span('r', 'r', 0),
      span('c2', 'r', 2),
      span('c1', 'r', 1),
      span('g2', 'c1', null, '2026-01-01 00:00:02'),
      span('g1', 'c1', null, '2026-01-01 00:00:01'),
    ];
    const [tree] = buildTrees(rows, ['r']);
    expect(tree.children_ids).toEqual(['c1', 'c2']);
    expect(tree.children[0].children_ids).toEqual(['g1', 'g2']);
    expect(tree.children[0].children[1].children).toEqual([]);
  });
  it('lists child ids the client declared that have not arrived after the arrived ones', () => {
    const rows = [{ ...span('r', 'r', 0), children_ids: ['later', 'c'] }, span('c', 'r', 1)];
    expect(buildTrees(rows, ['r'])[0].children_ids).toEqual(['c', 'later']);
  });
  it('builds a subtree from any span and keeps the requested order of roots', () => {
    const rows = [span('a', 'a', 0), span('b', 'b', 0), span('a1', 'a', 1)];
    expect(buildTrees(rows, ['b', 'a', 'missing']).map((t) => t.trace_id)).toEqual(['b', 'a']);
    expect(buildTrees(rows, ['a1'])[0].children).toEqual([]);
  });
  it('survives cycles and very deep chains', () => {
    const cyclic = [span('x', 'y', 0), span('y', 'x', 1)];
    expect(buildTrees(cyclic, ['x'])[0].children_ids).toEqual(['y']);
    const deep = [span('n0', 'n0', 0), ...Array.from({ length: 50_000 }, (_, i) => span(`n${i + 1}`, `n${i}`, i + 1))];
    let node = buildTrees(deep, ['n0'])[0];
    let depth = 0;
    while (node.children.length) {
      node = node.children[0];
      depth++;
    }
    expect(depth).toBe(50_000);
  });
});
