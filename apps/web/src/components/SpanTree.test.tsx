import { fireEvent, screen, within } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import type { SkeletonSpan } from '../api/types';
import { buildSpanTree, visibleNodes } from '../lib/span-tree';
import { renderWithKit } from '../test/render';
import { SpanTree } from './SpanTree';

const T0 = Date.UTC(2026, 4, 1, 10, 0, 0);
function span(
  id: string,
  parent: string,
  order: number,
  startMs: number,
  latency: number,
  extra: Partial<SkeletonSpan> = {},
): SkeletonSpan {
  return {
    trace_id: id,
    parent_trace_id: parent,
    trace_name: id,
    kind: null,
    start_timestamp: new Date(T0 + startMs).toISOString(),
    end_timestamp: null,
    latency,
    status: 'success',
    input_tokens: null,
    output_tokens: null,
    total_tokens: null,
    cost: null,
    depth: 0,
    execution_order: order,
    ...extra,
  };
}

// root (0-4 s) -> retrieve (0-1 s), llm (1-4 s) -> tool (2-3 s); plus a span whose parent is not in the skeleton.
const SKELETON = [
  span('root', 'root', 0, 0, 4),
  span('llm', 'root', 2, 1000, 3, { kind: 'llm', total_tokens: 42, cost: 0.0021 }),
  span('tool', 'llm', 3, 2000, 1, { kind: 'tool', status: 'error' }),
  span('retrieve', 'root', 1, 0, 1, { kind: 'retriever', start_timestamp: '2026-05-01 10:00:00' }),
  span('orphan', 'missing-parent', 4, 3000, 0.5),
];

function Harness({ initial = 'root' }: { initial?: string }) {
  const tree = buildSpanTree(SKELETON, 'root');
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState<string | null>(initial);
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const n = new Set(c);
      if (!n.delete(id)) n.add(id);
      return n;
    });
  return (
    <SpanTree
      tree={tree}
      collapsed={collapsed}
      onToggle={toggle}
      selected={selected}
      onSelect={setSelected}
      height={600}
    />
  );
}

const names = () => screen.getAllByRole('treeitem').map((row) => row.id.replace('span-', ''));

describe('the span tree and timeline built from a skeleton', () => {
  it('orders spans depth first by execution order, with depths from the parent links', () => {
    const tree = buildSpanTree(SKELETON, 'root');
    expect(tree.nodes.map((n) => [n.span.trace_id, n.depth])).toEqual([
      ['root', 0],
      ['retrieve', 1],
      ['llm', 1],
      ['tool', 2],
      ['orphan', 1],
    ]);
    expect(tree.nodes[0]!.size).toBe(5);
    expect(visibleNodes(tree, new Set(['llm'])).map((i) => tree.nodes[i]!.span.trace_id)).toEqual([
      'root',
      'retrieve',
      'llm',
      'orphan',
    ]);
  });

  it('draws each span with its kind, metrics and a bar placed by start and duration', () => {
    renderWithKit(<Harness />);
    expect(names()).toEqual(['root', 'retrieve', 'llm', 'tool', 'orphan']);
    const llm = screen.getAllByRole('treeitem')[2]!;
    expect(within(llm).getByText('llm', { selector: '.mantine-Badge-label' })).toBeTruthy();
    expect(llm.textContent).toContain('42 tok');
    expect(llm.textContent).toContain('$0.0021');
    expect(llm.textContent).toContain('3.00 s');
    const bar = llm.querySelector<HTMLElement>('.bar')!;
    expect(parseFloat(bar.style.left)).toBeCloseTo(25);
    expect(parseFloat(bar.style.width)).toBeCloseTo(75);
    expect(screen.getAllByRole('treeitem')[3]!.getAttribute('aria-level')).toBe('3');
    expect(within(screen.getAllByRole('treeitem')[3]!).getByLabelText('error')).toBeTruthy();
  });

  it('collapses and expands a subtree, by the chevron and by the keyboard', () => {
    renderWithKit(<Harness initial="llm" />);
    const llm = () => screen.getAllByRole('treeitem').find((r) => r.id === 'span-llm')!;
    fireEvent.click(within(llm()).getByRole('button', { name: 'Collapse' }));
    expect(names()).toEqual(['root', 'retrieve', 'llm', 'orphan']);
    expect(llm().getAttribute('aria-expanded')).toBe('false');
    const tree = screen.getByRole('tree');
    fireEvent.keyDown(tree, { key: 'ArrowRight' });
    expect(names()).toContain('tool');
    fireEvent.keyDown(tree, { key: 'ArrowLeft' });
    expect(names()).not.toContain('tool');
  });

  it('moves the selection with up and down, to the parent with left', () => {
    renderWithKit(<Harness initial="retrieve" />);
    const tree = screen.getByRole('tree');
    const selected = () => screen.getAllByRole('treeitem').find((r) => r.getAttribute('aria-selected') === 'true')!.id;
    fireEvent.keyDown(tree, { key: 'ArrowDown' });
    expect(selected()).toBe('span-llm');
    fireEvent.keyDown(tree, { key: 'ArrowRight' }); // expanded already: to the first child
    expect(selected()).toBe('span-tool');
    fireEvent.keyDown(tree, { key: 'ArrowLeft' }); // a leaf: to its parent
    expect(selected()).toBe('span-llm');
    fireEvent.keyDown(tree, { key: 'ArrowUp' });
    expect(selected()).toBe('span-retrieve');
    expect(tree.getAttribute('aria-activedescendant')).toBe('span-retrieve');
  });

  it('builds a 10,000-span trace quickly and draws only a window of it', () => {
    const spans = [span('s0', 's0', 0, 0, 100)];
    for (let i = 1; i < 10_000; i++) spans.push(span(`s${i}`, `s${Math.floor((i - 1) / 4)}`, i, i * 5, 0.004));
    const started = performance.now();
    const tree = buildSpanTree(spans, 's0');
    expect(performance.now() - started).toBeLessThan(500);
    expect(tree.nodes).toHaveLength(10_000);
    expect(visibleNodes(tree, new Set())).toHaveLength(10_000);
    renderWithKit(
      <SpanTree tree={tree} collapsed={new Set()} onToggle={() => {}} selected="s0" onSelect={() => {}} height={600} />,
    );
    expect(screen.getAllByRole('treeitem').length).toBeLessThan(100);
  });
});
