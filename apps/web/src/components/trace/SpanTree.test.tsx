import { fireEvent, screen, within } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import type { SkeletonSpan } from '../../api/types';
import { buildSpanTree, visibleNodes } from '../../lib/span-tree';
import { renderWithKit } from '../../test/render';
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
    usage_estimated: false,
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
    // The chevron is for the pointer (the keys and aria-expanded say the same): hidden from assistive tech.
    fireEvent.click(within(llm()).getByLabelText('Collapse'));
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
  });

  it('is a tree with a roving tabindex that the keys move focus and selection through', () => {
    renderWithKit(<Harness initial="llm" />);
    const tree = screen.getByRole('tree', { name: 'Spans of the trace' });
    const item = (id: string) => document.getElementById(`span-${id}`)!;
    const focused = () => document.activeElement?.id;
    const selected = () => screen.getAllByRole('treeitem').find((r) => r.getAttribute('aria-selected') === 'true')?.id;
    const tabStops = () =>
      screen
        .getAllByRole('treeitem')
        .filter((r) => r.tabIndex === 0)
        .map((r) => r.id);
    // One tab stop, the selected span; the tree hands focus to it.
    expect(tabStops()).toEqual(['span-llm']);
    expect(tree.tabIndex).toBe(-1);
    tree.focus();
    expect(focused()).toBe('span-llm');
    expect(item('llm').getAttribute('aria-expanded')).toBe('true');
    expect([item('llm').getAttribute('aria-posinset'), item('llm').getAttribute('aria-setsize')]).toEqual(['2', '3']);
    expect(item('tool').getAttribute('aria-expanded')).toBeNull(); // a leaf

    const press = (key: string) => fireEvent.keyDown(document.activeElement!, { key });
    press('ArrowDown');
    expect([focused(), selected(), tabStops()]).toEqual(['span-tool', 'span-tool', ['span-tool']]);
    press('ArrowRight'); // a leaf: nothing
    expect(focused()).toBe('span-tool');
    press('ArrowLeft'); // a leaf: to its parent
    expect([focused(), selected()]).toEqual(['span-llm', 'span-llm']);
    press('ArrowLeft'); // open: collapses, focus stays
    expect(item('llm').getAttribute('aria-expanded')).toBe('false');
    expect(names()).not.toContain('tool');
    expect(focused()).toBe('span-llm');
    press('ArrowLeft'); // closed: to its parent
    expect(focused()).toBe('span-root');
    press('End');
    expect([focused(), selected()]).toEqual(['span-orphan', 'span-orphan']);
    press('Home');
    expect([focused(), selected()]).toEqual(['span-root', 'span-root']);
    press('ArrowUp'); // the first: stays
    expect(focused()).toBe('span-root');
    press('ArrowDown');
    press('ArrowDown');
    expect(focused()).toBe('span-llm');
    press('ArrowRight'); // closed: expands, focus stays
    expect(names()).toContain('tool');
    expect(focused()).toBe('span-llm');
    press('ArrowRight'); // open: to the first child
    expect(focused()).toBe('span-tool');
  });

  it('selects with Enter, and keeps a key on a span whose selection is out of sight', () => {
    const picked: string[] = [];
    const tree = buildSpanTree(SKELETON, 'root');
    const draw = (selected: string | null, collapsed: ReadonlySet<string>) => (
      <SpanTree
        tree={tree}
        collapsed={collapsed}
        onToggle={() => {}}
        selected={selected}
        onSelect={(id) => picked.push(id)}
        height={600}
      />
    );
    // The selected span sits under a collapsed parent: the parent is the tab stop, Enter selects it.
    const { unmount } = renderWithKit(draw('tool', new Set(['llm'])));
    const stops = () => screen.getAllByRole('treeitem').filter((r) => r.tabIndex === 0);
    expect(stops().map((r) => r.id)).toEqual(['span-llm']);
    fireEvent.keyDown(stops()[0]!, { key: 'Enter' });
    fireEvent.keyDown(stops()[0]!, { key: ' ' });
    expect(picked).toEqual(['llm', 'llm']);
    // A span the trace does not hold: the first row is the tab stop, and the keys still move.
    unmount();
    renderWithKit(draw('not-in-this-trace', new Set()));
    expect(stops().map((r) => r.id)).toEqual(['span-root']);
    fireEvent.keyDown(stops()[0]!, { key: 'ArrowDown' });
    expect(picked.at(-1)).toBe('retrieve');
    // Modified keys are the browser's.
    fireEvent.keyDown(stops()[0]!, { key: 'End', ctrlKey: true });
    expect(picked).toHaveLength(3);
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
