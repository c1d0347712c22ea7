import { describe, expect, it } from 'vitest';
import { API_TREES, CLIENT_TREES, renderChildren, renderTrees, type SpanTexts } from './tree';

type Row = {
  trace_id: string;
  parent_trace_id: string;
  execution_order: number | null;
  start_timestamp: string;
  children_ids?: string[];
};
type Tree = {
  trace_id: string;
  parent_trace_id: string;
  execution_order: number | null;
  children_ids: string[];
  children: Tree[];
};

const span = (
  trace_id: string,
  parent_trace_id: string,
  execution_order: number | null,
  start = '2026-01-01 00:00:00',
): Row => ({
  trace_id,
  parent_trace_id,
  execution_order,
  start_timestamp: start,
});

/** Spans as columns, each carrying three fields as its members. */
const texts = (rows: Row[], dialect = API_TREES): SpanTexts => {
  const members = rows.map((r) =>
    Buffer.from(
      `"trace_id":${JSON.stringify(r.trace_id)},"parent_trace_id":${JSON.stringify(r.parent_trace_id)},"execution_order":${JSON.stringify(r.execution_order)}`,
    ),
  );
  return {
    dialect,
    trace_id: rows.map((r) => r.trace_id),
    parent_trace_id: rows.map((r) => r.parent_trace_id),
    execution_order: rows.map((r) => r.execution_order),
    start_timestamp: rows.map((r) => r.start_timestamp),
    children_ids: rows.map((r) => r.children_ids ?? null),
    members,
  };
};
const render = (rows: Row[], rootIds: string[]): Tree[] =>
  JSON.parse(`[${renderTrees(texts(rows), rootIds).toString()}]`);
/** A tree as rendered from the members above; its child ids are its children's unless given. */
const tree = (
  trace_id: string,
  parent_trace_id: string,
  execution_order: number | null,
  children: Tree[] = [],
  children_ids = children.map((c) => c.trace_id),
): Tree => ({
  trace_id,
  parent_trace_id,
  execution_order,
  children_ids,
  children,
});

describe('renderTrees', () => {
  it('nests children ordered by execution_order, then start time', () => {
    const rows = [
      span('r', 'r', 0),
      span('c2', 'r', 2),
      span('c1', 'r', 1),
      span('g2', 'c1', null, '2026-01-01 00:00:02'),
      span('g1', 'c1', null, '2026-01-01 00:00:01'),
    ];
    const [root] = render(rows, ['r']);
    expect(root.children_ids).toEqual(['c1', 'c2']);
    expect(root.children[0].children_ids).toEqual(['g1', 'g2']);
    expect(root.children[0].children[1].children).toEqual([]);
  });
  it('lists child ids the client declared that have not arrived after the arrived ones', () => {
    const rows = [{ ...span('r', 'r', 0), children_ids: ['later', 'c'] }, span('c', 'r', 1)];
    expect(render(rows, ['r'])[0].children_ids).toEqual(['c', 'later']);
  });
  it('renders a subtree from any span and keeps the requested order of roots', () => {
    const rows = [span('a', 'a', 0), span('b', 'b', 0), span('a1', 'a', 1)];
    expect(render(rows, ['b', 'a', 'missing']).map((t) => t.trace_id)).toEqual(['b', 'a']);
    expect(render(rows, ['a1'])[0].children).toEqual([]);
  });
  it('writes the JSON of the trees, comma-separated', () => {
    const rows = [
      span('r', 'r', 0),
      span('c2', 'r', 2),
      { ...span('c1', 'r', 1), children_ids: ['g3', 'g1'] },
      span('g2', 'c1', null, '2026-01-01 00:00:02'),
      span('g1', 'c1', null, '2026-01-01 00:00:01'),
      span('other', 'other', 0),
    ];
    expect(render(rows, ['other', 'r', 'missing'])).toEqual([
      tree('other', 'other', 0),
      tree('r', 'r', 0, [
        tree('c1', 'r', 1, [tree('g1', 'c1', null), tree('g2', 'c1', null)], ['g1', 'g2', 'g3']),
        tree('c2', 'r', 2),
      ]),
    ]);
    expect(renderTrees(texts(rows), ['missing']).length).toBe(0);
  });
  it('survives cycles and very deep chains in linear time', () => {
    const cyclic = [span('x', 'y', 0), span('y', 'x', 1)];
    expect(render(cyclic, ['x'])).toEqual([tree('x', 'y', 0, [tree('y', 'x', 1)])]);
    const deep = [span('n0', 'n0', 0), ...Array.from({ length: 50_000 }, (_, i) => span(`n${i + 1}`, `n${i}`, i + 1))];
    const json = renderTrees(texts(deep), ['n0']).toString();
    expect(json.length).toBeLessThan(50_001 * 120);
    expect(json.match(/"children":\[\]/g)).toHaveLength(1);
  });
  it("names the nested spans and child ids as the spans' dialect says, writing each span once", () => {
    const rows = [span('r', 'r', 0), { ...span('c', 'r', 1), children_ids: ['late'] }, span('g', 'c', 0)];
    const [api] = render(rows, ['r']);
    const [client] = JSON.parse(`[${renderTrees(texts(rows, CLIENT_TREES), ['r']).toString()}]`);
    const asClient = ({ children, children_ids, ...rest }: Tree): object => ({
      ...rest,
      children: children_ids,
      children_logs: children.map(asClient),
    });
    expect(client).toEqual(asClient(api));
    expect(client.children_logs[0]).toMatchObject({ trace_id: 'c', children: ['g', 'late'] });
  });
});

describe('renderChildren', () => {
  it("writes each root's children as a JSON array a line, all its quotes doubled when the members' are", () => {
    const rows = [span('r', 'r', 0), span('c', 'r', 1), span('g', 'c', 0), span('s', 's', 0)];
    const plain = renderChildren(texts(rows), ['r', 's']).toString();
    expect(plain.split('\n').map((line) => JSON.parse(line))).toEqual([[tree('c', 'r', 1, [tree('g', 'c', 0)])], []]);
    const doubled = texts(rows);
    doubled.members = doubled.members.map((m) => Buffer.from(m.toString().replaceAll('"', '""')));
    doubled.quotesDoubled = true;
    expect(renderChildren(doubled, ['r', 's']).toString()).toBe(plain.replaceAll('"', '""'));
  });
});
