import { describe, expect, it } from 'vitest';
import { API_TREES, buildTrees, CLIENT_TREES, renderTrees, type FlatSpan, type SpanTexts } from './tree';

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

describe('renderTrees', () => {
  /** Spans as columns, each carrying three fields as its members. */
  const texts = (rows: FlatSpan[], dialect = API_TREES): SpanTexts => {
    const members = rows.map((r) => Buffer.from(`"trace_id":${JSON.stringify(r.trace_id)},"parent_trace_id":${JSON.stringify(r.parent_trace_id)},"execution_order":${JSON.stringify(r.execution_order ?? null)}`));
    return {
      dialect,
      trace_id: rows.map((r) => r.trace_id),
      parent_trace_id: rows.map((r) => r.parent_trace_id),
      execution_order: rows.map((r) => r.execution_order ?? null),
      start_timestamp: rows.map((r) => r.start_timestamp ?? null),
      children_ids: rows.map((r) => (r.children_ids as string[] | undefined) ?? null),
      members,
    };
  };
  const render = (rows: FlatSpan[], rootIds: string[]) => JSON.parse(`[${renderTrees(texts(rows), rootIds).toString()}]`);
  /** The trees buildTrees makes, with the fields the members above carry. */
  const expected = (rows: FlatSpan[], rootIds: string[]) =>
    JSON.parse(JSON.stringify(buildTrees(rows.map(({ trace_id, parent_trace_id, execution_order, children_ids }) => ({ trace_id, parent_trace_id, execution_order: execution_order ?? null, ...(children_ids !== undefined && { children_ids }) })), rootIds)));

  it('writes the JSON of the trees buildTrees makes, comma-separated', () => {
    const rows = [
      span('r', 'r', 0),
      span('c2', 'r', 2),
      { ...span('c1', 'r', 1), children_ids: ['g3', 'g1'] },
      span('g2', 'c1', null, '2026-01-01 00:00:02'),
      span('g1', 'c1', null, '2026-01-01 00:00:01'),
      span('other', 'other', 0),
    ];
    const trees = render(rows, ['other', 'r', 'missing']);
    expect(trees).toEqual(expected(rows, ['other', 'r', 'missing']));
    expect(trees[1].children[0].children_ids).toEqual(['g1', 'g2', 'g3']);
    expect(renderTrees(texts(rows), ['missing']).length).toBe(0);
  });
  it('survives cycles and very deep chains in linear time', () => {
    const cyclic = [span('x', 'y', 0), span('y', 'x', 1)];
    expect(render(cyclic, ['x'])).toEqual(expected(cyclic, ['x']));
    const deep = [span('n0', 'n0', 0), ...Array.from({ length: 50_000 }, (_, i) => span(`n${i + 1}`, `n${i}`, i + 1))];
    const json = renderTrees(texts(deep), ['n0']).toString();
    expect(json.length).toBeLessThan(50_001 * 120);
    expect(json.match(/"children":\[\]/g)).toHaveLength(1);
  });
  it('names the nested spans and child ids as the spans\' dialect says, writing each span once', () => {
    const rows = [span('r', 'r', 0), { ...span('c', 'r', 1), children_ids: ['late'] }, span('g', 'c', 0)];
    const [api] = render(rows, ['r']);
    const [client] = JSON.parse(`[${renderTrees(texts(rows, CLIENT_TREES), ['r']).toString()}]`);
    const asClient = (t: any): any => {
      const { children, children_ids, ...rest } = t;
      return { ...rest, children: children_ids, children_logs: children.map(asClient) };
    };
    expect(client).toEqual(asClient(api));
    expect(client.children_logs[0]).toMatchObject({ trace_id: 'c', children: ['g', 'late'] });
  });
});
