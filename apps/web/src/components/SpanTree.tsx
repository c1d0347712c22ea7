import { ActionIcon, Badge, Group, Text, Tooltip } from '@mantine/core';
import { IconAlertCircleFilled, IconChevronDown, IconChevronRight } from '@tabler/icons-react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, type KeyboardEvent } from 'react';
import { formatCost, formatLatency, formatTokens } from '../lib/format';
import { barOf, visibleNodes, type SpanTree as Tree } from '../lib/span-tree';
import { KIND_COLORS } from '../theme';

const ROW = 30;
// Deep chains (an agent loop of thousands of steps) would push names off screen: indentation stops
// growing past this depth, and the depth is written instead.
const MAX_INDENT = 24;
const TREE_WIDTH = '58%';

type Props = {
  tree: Tree;
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
  selected: string | null;
  onSelect: (id: string) => void;
  height: number | string;
};

/**
 * The trace's spans as a collapsible tree beside a timeline (one bar per span, placed by start and
 * duration), drawn as one virtual list so that 10,000 spans stay as fast as ten. Keyboard: up/down move
 * between spans, left/right collapse and expand (or go to the parent / first child), Home/End.
 */
export function SpanTree({ tree, collapsed, onToggle, selected, onSelect, height }: Props) {
  const rows = useMemo(() => visibleNodes(tree, collapsed), [tree, collapsed]);
  const position = useMemo(() => new Map(rows.map((n, i) => [n, i])), [rows]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 20,
  });
  const selectedIndex = selected != null ? tree.index.get(selected) : undefined;
  const selectedRow = selectedIndex != null ? position.get(selectedIndex) : undefined;

  useEffect(() => {
    if (selectedRow != null) virtual.scrollToIndex(selectedRow, { align: 'auto' });
  }, [selectedRow, virtual]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (selectedIndex == null || selectedRow == null) return;
    const node = tree.nodes[selectedIndex]!;
    const id = node.span.trace_id;
    const isOpen = node.childCount > 0 && !collapsed.has(id);
    const go = (row: number) => {
      const n = rows[Math.max(0, Math.min(rows.length - 1, row))];
      if (n != null) onSelect(tree.nodes[n]!.span.trace_id);
    };
    const actions: Record<string, () => void> = {
      ArrowDown: () => go(selectedRow + 1),
      ArrowUp: () => go(selectedRow - 1),
      Home: () => go(0),
      End: () => go(rows.length - 1),
      PageDown: () => go(selectedRow + 15),
      PageUp: () => go(selectedRow - 15),
      ArrowRight: () => (node.childCount === 0 ? undefined : isOpen ? go(selectedRow + 1) : onToggle(id)),
      ArrowLeft: () =>
        isOpen ? onToggle(id) : node.parent >= 0 ? onSelect(tree.nodes[node.parent]!.span.trace_id) : undefined,
    };
    const action = actions[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  };

  const total = (tree.endMs - tree.startMs) / 1000;
  return (
    <div style={{ display: 'flex', flexDirection: 'column', height }}>
      <div
        style={{ display: 'flex', borderBottom: '1px solid var(--mantine-color-default-border)', padding: '6px 0' }}
        aria-hidden
      >
        <Text size="xs" c="dimmed" fw={600} px="sm" style={{ flex: `0 0 ${TREE_WIDTH}` }}>
          SPAN
        </Text>
        <div style={{ flex: 1, position: 'relative', marginRight: 12 }}>
          {(total > 0 ? [0, 0.25, 0.5, 0.75, 1] : [0]).map((f) => (
            <Text
              key={f}
              size="xs"
              c="dimmed"
              ff="monospace"
              style={{
                position: 'absolute',
                left: `${f * 100}%`,
                transform: f === 1 ? 'translateX(-100%)' : f > 0 ? 'translateX(-50%)' : undefined,
                whiteSpace: 'nowrap',
              }}
            >
              {formatLatency(total * f)}
            </Text>
          ))}
        </div>
      </div>
      <div
        ref={scroller}
        className="span-tree"
        role="tree"
        aria-label="Spans of the trace"
        aria-activedescendant={selected ? `span-${selected}` : undefined}
        tabIndex={0}
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
            const color = s.status === 'error' ? 'red' : (KIND_COLORS[kind] ?? 'gray');
            return (
              <div
                key={s.trace_id}
                id={`span-${s.trace_id}`}
                role="treeitem"
                aria-level={node.depth + 1}
                aria-expanded={node.childCount ? open : undefined}
                aria-selected={s.trace_id === selected}
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
                  style={{ flex: `0 0 ${TREE_WIDTH}`, minWidth: 0 }}
                >
                  {node.childCount ? (
                    <ActionIcon
                      size="xs"
                      variant="subtle"
                      color="gray"
                      tabIndex={-1}
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
                    style={{ flex: 1, minWidth: 0 }}
                    title={s.trace_name ?? ''}
                  >
                    {s.trace_name || (
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
                  <Text size="xs" c="dimmed" ff="monospace" style={{ flexShrink: 0, whiteSpace: 'nowrap' }}>
                    {s.total_tokens || s.input_tokens || s.output_tokens
                      ? `${formatTokens(s.input_tokens, s.output_tokens, s.total_tokens)} tok · `
                      : ''}
                    {s.cost ? `${formatCost(s.cost)} · ` : ''}
                    {formatLatency(
                      s.latency ??
                        (node.endMs != null && node.startMs != null ? (node.endMs - node.startMs) / 1000 : null),
                    )}
                  </Text>
                </Group>
                <div style={{ flex: 1, position: 'relative', height: '100%', marginRight: 12 }} aria-hidden>
                  {[0.25, 0.5, 0.75].map((f) => (
                    <div key={f} className="gridline" style={{ left: `${f * 100}%` }} />
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
