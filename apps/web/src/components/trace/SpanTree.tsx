import { ActionIcon, Badge, Group, Highlight, Text, Tooltip } from '@mantine/core';
import { useElementSize } from '@mantine/hooks';
import { IconAlertCircleFilled, IconChevronDown, IconChevronRight } from '@tabler/icons-react';
import { defaultRangeExtractor, useVirtualizer, type Range } from '@tanstack/react-virtual';
import { useCallback, useEffect, useMemo, useRef, type FocusEvent, type KeyboardEvent } from 'react';
import { formatCost, formatCount, formatLatency, formatTokens } from '../../lib/format';
import { KIND_COLORS } from '../../theme';
import { barOf, visibleNodes, type SpanTree as Tree } from '../../lib/span-tree';
import { axisTicks } from '../../lib/timeline-axis';

const ROW = 30;
// Deep chains (an agent loop of thousands of steps) would push names off screen: indentation stops
// growing past this depth, and the depth is written instead.
const MAX_INDENT = 24;

type Props = {
  tree: Tree;
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
  selected: string | null;
  onSelect: (id: string) => void;
  height: number | string;
  /** A search within the trace: the spans it shows (matches and their ancestors) and its matches, by place. */
  search?: TreeSearch | null;
};

export type TreeSearch = { text: string; kept: Uint8Array; matched: Uint8Array };

/** Each span's place among its siblings (from 1): only a window of the tree is in the page, so items say it. */
function placesAmongSiblings(tree: Tree): Int32Array {
  const places = new Int32Array(tree.nodes.length);
  const counts = new Int32Array(tree.nodes.length + 1);
  tree.nodes.forEach((n, i) => (places[i] = ++counts[n.parent + 1]!));
  return places;
}

/**
 * The trace's spans as a collapsible tree beside a timeline (one bar per span, placed by start and
 * duration), drawn as one virtual list so that 10,000 spans stay as fast as ten.
 *
 * A WAI-ARIA tree with a roving tabindex: Tab reaches the selected span (the one item with tabindex 0), and
 * the selection follows the focus. Up/Down move between the spans on screen, Right expands a span or goes
 * to its first child, Left collapses it or goes to its parent, Home/End and PageUp/PageDown jump, Enter
 * (or Space) selects the focused span as a click does. The focused item stays drawn and scrolled into
 * view however far the virtual window has moved.
 *
 * A collapsed span says how many failed spans it hides. A search draws only its matches and the spans on
 * the way to them (dimmed), the matching part of each name marked.
 */
export function SpanTree({ tree, collapsed, onToggle, selected, onSelect, height, search }: Props) {
  const kept = search?.kept;
  const rows = useMemo(() => visibleNodes(tree, collapsed, kept), [tree, collapsed, kept]);
  const position = useMemo(() => new Map(rows.map((n, i) => [n, i])), [rows]);
  const places = useMemo(() => placesAmongSiblings(tree), [tree]);
  const scroller = useRef<HTMLDivElement>(null);
  const selectedIndex = selected != null ? tree.index.get(selected) : undefined;
  // The focusable item: the selected span, or the nearest of its ancestors on screen (a collapsed parent),
  // or the first row when the selected span is not in the tree.
  const activeRow = useMemo(() => {
    for (let i = selectedIndex ?? -1; i >= 0; i = tree.nodes[i]!.parent) {
      const row = position.get(i);
      if (row != null) return row;
    }
    return 0;
  }, [tree, position, selectedIndex]);
  const activeId = rows.length ? tree.nodes[rows[activeRow]!]!.span.trace_id : null;
  // The focused item is drawn even when scrolled out of the window, so that focus is never lost with it.
  const rangeExtractor = useCallback(
    (range: Range) => {
      const indexes = defaultRangeExtractor(range);
      return activeRow < range.count && !indexes.includes(activeRow)
        ? [...indexes, activeRow].sort((a, b) => a - b)
        : indexes;
    },
    [activeRow],
  );
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 20,
    rangeExtractor,
  });

  useEffect(() => {
    if (rows.length) virtual.scrollToIndex(activeRow, { align: 'auto' });
  }, [activeRow, rows.length, virtual]);
  // Focus follows the keys (and a selection made elsewhere) while it is in the tree.
  useEffect(() => {
    const item = activeId != null ? document.getElementById(`span-${activeId}`) : null;
    if (item && item !== document.activeElement && scroller.current?.contains(document.activeElement))
      item.focus({ preventScroll: true });
  }, [activeId]);
  // The tree itself is not a tab stop; focused by a script or a click beside the rows, it hands focus on.
  const onFocus = (e: FocusEvent<HTMLDivElement>) => {
    if (e.target === e.currentTarget && activeId != null)
      document.getElementById(`span-${activeId}`)?.focus({ preventScroll: true });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (activeId == null || e.altKey || e.ctrlKey || e.metaKey) return;
    const node = tree.nodes[rows[activeRow]!]!;
    const isOpen = node.childCount > 0 && !collapsed.has(activeId);
    const go = (row: number) => {
      const n = rows[Math.max(0, Math.min(rows.length - 1, row))];
      if (n != null) onSelect(tree.nodes[n]!.span.trace_id);
    };
    // Enter and Space on the chevron are the chevron's own.
    const onItem = !(e.target as HTMLElement).closest('button');
    const actions: Record<string, () => void> = {
      ArrowDown: () => go(activeRow + 1),
      ArrowUp: () => go(activeRow - 1),
      Home: () => go(0),
      End: () => go(rows.length - 1),
      PageDown: () => go(activeRow + 15),
      PageUp: () => go(activeRow - 15),
      ArrowRight: () => (node.childCount === 0 ? undefined : isOpen ? go(activeRow + 1) : onToggle(activeId)),
      ArrowLeft: () =>
        isOpen ? onToggle(activeId) : node.parent >= 0 ? onSelect(tree.nodes[node.parent]!.span.trace_id) : undefined,
      ...(onItem ? { Enter: () => onSelect(activeId), ' ': () => onSelect(activeId) } : {}),
    };
    const action = actions[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  };

  const total = (tree.endMs - tree.startMs) / 1000;
  // As many labels as the axis's width holds, the rows' gridlines under them.
  const axis = useElementSize();
  const ticks = axisTicks(total, axis.width);
  const gridlines = ticks.filter((t) => t.at > 0 && t.at < 1);
  return (
    // The names column's share of the width grows as the pane narrows (app.css): names are what a reader needs.
    <div className="span-tree-pane" style={{ display: 'flex', flexDirection: 'column', height }}>
      <div
        style={{ display: 'flex', borderBottom: '1px solid var(--mantine-color-default-border)', padding: '6px 0' }}
        aria-hidden
      >
        <Text size="xs" c="dimmed" fw={600} px="sm" className="span-tree-names">
          SPAN
        </Text>
        <div ref={axis.ref} style={{ flex: 1, position: 'relative', marginRight: 12 }} data-testid="timeline-axis">
          {ticks.map(({ at, label }) => (
            <Text
              key={at}
              size="xs"
              c="dimmed"
              ff="monospace"
              style={{
                position: 'absolute',
                left: `${at * 100}%`,
                transform: at === 1 ? 'translateX(-100%)' : at > 0 ? 'translateX(-50%)' : undefined,
                whiteSpace: 'nowrap',
              }}
            >
              {label}
            </Text>
          ))}
        </div>
      </div>
      <div
        ref={scroller}
        className="span-tree"
        role="tree"
        aria-label="Spans of the trace"
        tabIndex={-1}
        onFocus={onFocus}
        onKeyDown={onKeyDown}
        style={{ flex: 1, overflow: 'auto', position: 'relative' }}
      >
        <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
          {virtual.getVirtualItems().map((item) => {
            const index = rows[item.index]!;
            const node = tree.nodes[index]!;
            const s = node.span;
            const open = !collapsed.has(s.trace_id);
            const bar = barOf(tree, node);
            const kind = s.kind ?? 'span';
            // Tokens and cost counted from the span's text, no usage having been reported.
            const about = s.usage_estimated ? '≈' : '';
            const color = s.status === 'error' ? 'red' : (KIND_COLORS[kind] ?? 'gray');
            // A span a search shows only on the way to its matches reads dimmed.
            const onTheWay = search != null && !search.matched[index];
            return (
              <div
                key={s.trace_id}
                id={`span-${s.trace_id}`}
                role="treeitem"
                aria-level={node.depth + 1}
                aria-setsize={node.parent >= 0 ? tree.nodes[node.parent]!.childCount : 1}
                aria-posinset={places[index]}
                aria-expanded={node.childCount ? open : undefined}
                aria-selected={s.trace_id === selected}
                tabIndex={item.index === activeRow ? 0 : -1}
                className="span-row"
                onClick={() => onSelect(s.trace_id)}
                style={{
                  position: 'absolute',
                  top: 0,
                  left: 0,
                  right: 0,
                  height: ROW,
                  transform: `translateY(${item.start}px)`,
                }}
              >
                <Group
                  gap={4}
                  wrap="nowrap"
                  pl={6 + Math.min(node.depth, MAX_INDENT) * 14}
                  pr="xs"
                  className="span-tree-names"
                  style={{ minWidth: 0 }}
                >
                  {node.childCount ? (
                    <ActionIcon
                      size="xs"
                      variant="subtle"
                      color="gray"
                      tabIndex={-1}
                      // For the pointer: the tree's keys and aria-expanded say the same to everyone else.
                      aria-hidden
                      aria-label={open ? 'Collapse' : 'Expand'}
                      onClick={(e) => {
                        e.stopPropagation();
                        onToggle(s.trace_id);
                      }}
                    >
                      {open ? <IconChevronDown size={14} /> : <IconChevronRight size={14} />}
                    </ActionIcon>
                  ) : (
                    <span style={{ width: 18, flex: '0 0 18px' }} />
                  )}
                  {node.depth > MAX_INDENT && (
                    <Text size="xs" c="dimmed" ff="monospace">
                      {node.depth}›
                    </Text>
                  )}
                  <Badge
                    size="xs"
                    variant="light"
                    color={KIND_COLORS[kind] ?? 'gray'}
                    radius="sm"
                    style={{ flexShrink: 0 }}
                  >
                    {kind}
                  </Badge>
                  <Text
                    size="sm"
                    truncate
                    fw={s.trace_id === selected ? 600 : 400}
                    c={onTheWay ? 'dimmed' : undefined}
                    style={{ flex: 1, minWidth: 0 }}
                    title={s.trace_name ?? ''}
                  >
                    {s.trace_name ? (
                      search ? (
                        <Highlight span inherit highlight={search.text}>
                          {s.trace_name}
                        </Highlight>
                      ) : (
                        s.trace_name
                      )
                    ) : (
                      <Text span c="dimmed" size="sm">
                        unnamed
                      </Text>
                    )}
                  </Text>
                  {s.status === 'error' && (
                    <Tooltip label="Error">
                      <IconAlertCircleFilled size={14} color="var(--mantine-color-red-6)" aria-label="error" />
                    </Tooltip>
                  )}
                  {!open && node.failedBelow > 0 && (
                    <Badge size="xs" variant="light" color="red" radius="sm" style={{ flexShrink: 0 }}>
                      {formatCount(node.failedBelow)} failed below
                    </Badge>
                  )}
                  <Text
                    size="xs"
                    c="dimmed"
                    ff="monospace"
                    className="span-figures"
                    style={{ flexShrink: 0, whiteSpace: 'nowrap' }}
                  >
                    <span className="span-figures-extra">
                      {s.total_tokens || s.input_tokens || s.output_tokens
                        ? `${about}${formatTokens(s.input_tokens, s.output_tokens, s.total_tokens)} tok · `
                        : ''}
                      {s.cost ? `${about}${formatCost(s.cost)} · ` : ''}
                    </span>
                    {formatLatency(
                      s.latency ??
                        (node.endMs != null && node.startMs != null ? (node.endMs - node.startMs) / 1000 : null),
                    )}
                  </Text>
                </Group>
                <div style={{ flex: 1, position: 'relative', height: '100%', marginRight: 12 }} aria-hidden>
                  {gridlines.map(({ at }) => (
                    <div key={at} className="gridline" style={{ left: `${at * 100}%` }} />
                  ))}
                  {bar && (
                    <div
                      className={`bar${bar.open ? ' bar-open' : ''}`}
                      style={{
                        left: `${bar.left * 100}%`,
                        width: `${bar.width * 100}%`,
                        backgroundColor: `var(--mantine-color-${color}-${s.status === 'error' ? 6 : 5})`,
                      }}
                    />
                  )}
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
