import {
  ActionIcon,
  Anchor,
  Button,
  Checkbox,
  Divider,
  Group,
  Popover,
  Stack,
  Table,
  Text,
  TextInput,
  UnstyledButton,
} from '@mantine/core';
import { useLocalStorage } from '@mantine/hooks';
import { IconArrowDown, IconArrowUp, IconArrowsSort, IconColumns, IconX } from '@tabler/icons-react';
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  useReactTable,
  type OnChangeFn,
  type RowSelectionState,
  type VisibilityState,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import type { TraceRow, TraceSort } from '../../../api/types';
import { Chips, Estimated, scoreChips, StatusBadge } from '../../../components/TraceCells';
import { Timestamp } from '../../../components/ui/Timestamp';
import { formatCost, formatCount, formatLatency, formatScore, formatTokens } from '../../../lib/format';
import { compactText, MAX_METADATA_COLUMNS, metadataText, type ContentColumns } from '../lib/content-columns';

const column = createColumnHelper<TraceRow>();
const mono = { ff: 'monospace', size: 'sm' } as const;

/** The table's columns; `size` is the width in pixels (fixed layout: virtual rows never change widths). */
const TRACE_COLUMNS = [
  column.accessor('trace_name', { id: 'name', header: 'Name', size: 220, enableHiding: false }),
  column.accessor('start_timestamp', {
    id: 'start',
    header: 'Start',
    size: 170,
    cell: (c) => <Timestamp value={c.getValue()} size="sm" />,
  }),
  column.accessor('latency', {
    id: 'latency',
    header: 'Latency',
    size: 90,
    meta: { align: 'right' },
    cell: (c) => (
      <Text span {...mono}>
        {formatLatency(c.getValue())}
      </Text>
    ),
  }),
  column.display({
    id: 'tokens',
    header: 'Tokens',
    size: 90,
    meta: { align: 'right' },
    cell: ({ row: { original: r } }) => (
      <Text span {...mono}>
        <Estimated estimated={r.usage_estimated}>
          {formatTokens(r.input_tokens, r.output_tokens, r.total_tokens)}
        </Estimated>
      </Text>
    ),
  }),
  column.accessor('cost', {
    id: 'cost',
    header: 'Cost',
    size: 100,
    meta: { align: 'right' },
    cell: (c) => (
      <Text span {...mono}>
        <Estimated estimated={c.row.original.usage_estimated}>{formatCost(c.getValue())}</Estimated>
      </Text>
    ),
  }),
  column.accessor('status', {
    id: 'status',
    header: 'Status',
    // Wide enough for "SUCCESS" in a wide fallback font (DejaVu Sans), with the cell's padding: a cut status
    // reads as another one.
    size: 120,
    cell: ({ row: { original: r } }) => <StatusBadge status={r.status} error={r.error} />,
  }),
  column.accessor('scores', {
    id: 'scores',
    header: 'Scores',
    size: 240,
    cell: (c) => <Chips items={scoreChips(c.getValue())} color="indigo" />,
  }),
  column.accessor('tags', { id: 'tags', header: 'Tags', size: 220, cell: (c) => <Chips items={c.getValue()} /> }),
  column.accessor('end_user_identifier', {
    id: 'user',
    header: 'User',
    size: 150,
    cell: (c) => (
      <Text span size="sm" truncate>
        {c.getValue() ?? '–'}
      </Text>
    ),
  }),
  column.accessor('session_id', {
    id: 'session',
    header: 'Session',
    size: 130,
    cell: (c) => (
      <Text span size="sm" truncate>
        {c.getValue() ?? '–'}
      </Text>
    ),
  }),
  column.accessor('feedback_score', {
    id: 'feedback',
    header: 'Feedback',
    size: 100,
    meta: { align: 'right' },
    cell: (c) => (
      <Text span {...mono}>
        {formatScore(c.getValue())}
      </Text>
    ),
  }),
  column.accessor('span_count', {
    id: 'spans',
    header: 'Spans',
    size: 80,
    meta: { align: 'right' },
    cell: (c) => (
      <Text span {...mono}>
        {formatCount(c.getValue())}
      </Text>
    ),
  }),
];
/** A payload's first line in a cell, in monospace when it is JSON; the whole start on hover. */
function ContentCell({ text }: { text: string | null | undefined }) {
  const compact = compactText(text);
  if (!compact)
    return (
      <Text span size="sm" c="dimmed">
        –
      </Text>
    );
  return (
    <Text span size="sm" ff={compact.json ? 'monospace' : undefined} title={text ?? undefined}>
      {compact.line}
    </Text>
  );
}

/** The content columns chosen, after the name: input, output, error message, then each metadata key. */
function contentColumns(content: ContentColumns & { error: boolean }) {
  const columns = [];
  if (content.input)
    columns.push(
      column.accessor('input_preview', {
        id: 'input',
        header: 'Input',
        size: 260,
        enableHiding: false,
        cell: (c) => <ContentCell text={c.getValue()} />,
      }),
    );
  if (content.output)
    columns.push(
      column.accessor('output_preview', {
        id: 'output',
        header: 'Output',
        size: 260,
        enableHiding: false,
        cell: (c) => <ContentCell text={c.getValue()} />,
      }),
    );
  if (content.error)
    columns.push(
      column.accessor('error', {
        id: 'error',
        header: 'Error',
        size: 260,
        enableHiding: false,
        cell: (c) => <ContentCell text={c.getValue()} />,
      }),
    );
  for (const key of content.metadata)
    columns.push(
      column.display({
        id: `metadata:${key}`,
        header: key,
        size: 160,
        enableHiding: false,
        cell: ({ row: { original: r } }) => <ContentCell text={metadataText(r.metadata_values?.[key])} />,
      }),
    );
  return columns;
}

/** The checkbox column of a table whose rows can be picked (for "Add to dataset"). */
const SELECT_COLUMN = column.display({
  id: 'select',
  size: 40,
  enableHiding: false,
  header: ({ table }) => (
    <Checkbox
      aria-label="Select every trace on this page"
      checked={table.getIsAllRowsSelected()}
      indeterminate={table.getIsSomeRowsSelected()}
      onChange={table.getToggleAllRowsSelectedHandler()}
    />
  ),
  cell: ({ row }) => (
    <Checkbox
      aria-label={`Select ${row.original.trace_name ?? row.id}`}
      checked={row.getIsSelected()}
      onChange={row.getToggleSelectedHandler()}
      onClick={(e) => e.stopPropagation()}
    />
  ),
});
const DEFAULT_HIDDEN: VisibilityState = { feedback: false, spans: false };

type Direction = 'ascending' | 'descending';
/** The columns a header click sorts by: the listing's order each way, and the way a first click sorts. */
const COLUMN_SORTS: Record<string, { ascending: TraceSort; descending: TraceSort; first: Direction }> = {
  name: { ascending: 'name_asc', descending: 'name_desc', first: 'ascending' },
  start: { ascending: 'oldest', descending: 'newest', first: 'descending' },
  latency: { ascending: 'fastest', descending: 'slowest', first: 'descending' },
  tokens: { ascending: 'fewest_tokens', descending: 'most_tokens', first: 'descending' },
  cost: { ascending: 'cheapest', descending: 'costliest', first: 'descending' },
  feedback: { ascending: 'worst_feedback', descending: 'best_feedback', first: 'descending' },
};

/** How the column sorts the table now, if it does. */
function directionOf(columnId: string, sort: TraceSort | undefined): Direction | undefined {
  const sorts = COLUMN_SORTS[columnId];
  if (!sorts || !sort) return undefined;
  return sorts.ascending === sort ? 'ascending' : sorts.descending === sort ? 'descending' : undefined;
}

/** The order a click on the column's header asks for: its first way, or the other way when already sorted so. */
function nextSort(columnId: string, sort: TraceSort | undefined): TraceSort {
  const sorts = COLUMN_SORTS[columnId]!;
  const now = directionOf(columnId, sort);
  const other: Direction = sorts.first === 'ascending' ? 'descending' : 'ascending';
  return sorts[now === sorts.first ? other : sorts.first];
}
const ROW_HEIGHT = 41;

type Props = {
  rows: TraceRow[];
  linkTo: (row: TraceRow) => string;
  onOpen: (row: TraceRow) => void;
  /** Ids of rows that arrived live, highlighted for a moment. */
  fresh?: ReadonlySet<string>;
  /** True while the pointer is over the rows or the list is scrolled down: the user is reading. */
  onReadingChange?: (reading: boolean) => void;
  height: number | string;
  /** Picked rows by trace id; without it the table has no checkboxes. */
  selection?: RowSelectionState;
  onSelectionChange?: OnChangeFn<RowSelectionState>;
  /** The listing's order; with `onSort`, the headers of sortable columns sort the table when clicked. */
  sort?: TraceSort;
  onSort?: (sort: TraceSort) => void;
  /** The content columns shown beside the figures (the error column's choice already made). */
  content?: ContentColumns & { error: boolean };
};

export function TracesTable({
  rows,
  linkTo,
  onOpen,
  fresh,
  onReadingChange,
  height,
  selection,
  onSelectionChange,
  sort,
  onSort,
  content,
}: Props) {
  const [visibility, setVisibility] = useLocalStorage<VisibilityState>({
    key: 'sightline.traceColumns',
    defaultValue: DEFAULT_HIDDEN,
  });
  const selectable = !!selection;
  const columns = useMemo(() => {
    const [name, ...figures] = TRACE_COLUMNS;
    const all = [name!, ...(content ? contentColumns(content) : []), ...figures];
    return selectable ? [SELECT_COLUMN, ...all] : all;
  }, [selectable, content]);
  const table = useReactTable({
    data: rows,
    columns,
    state: { columnVisibility: visibility, rowSelection: selection ?? {} },
    onColumnVisibilityChange: setVisibility,
    enableRowSelection: selectable,
    onRowSelectionChange: onSelectionChange,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => r.trace_id,
  });
  const scroller = useRef<HTMLDivElement>(null);
  const hovering = useRef(false);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtual.getVirtualItems();
  const top = items[0]?.start ?? 0;
  const bottom = virtual.getTotalSize() - (items.at(-1)?.end ?? 0);
  const visible = table.getVisibleLeafColumns();
  const width = visible.reduce((w, c) => w + c.getSize(), 0);
  const report = () => onReadingChange?.(hovering.current || (scroller.current?.scrollTop ?? 0) > 4);

  return (
    <div
      ref={scroller}
      style={{ height, overflow: 'auto', position: 'relative' }}
      onScroll={report}
      onPointerEnter={() => {
        hovering.current = true;
        report();
      }}
      onPointerLeave={() => {
        hovering.current = false;
        report();
      }}
      data-testid="traces-scroller"
    >
      <Table
        stickyHeader
        highlightOnHover={false}
        verticalSpacing={8}
        style={{ tableLayout: 'fixed', width, minWidth: '100%' }}
        aria-label="Traces"
        aria-rowcount={rows.length}
      >
        <colgroup>
          {visible.map((c) => (
            <col key={c.id} style={{ width: c.getSize() }} />
          ))}
        </colgroup>
        <Table.Thead style={{ zIndex: 2 }}>
          <Table.Tr>
            {table
              .getFlatHeaders()
              .filter((h) => h.column.getIsVisible())
              .map((h) => {
                const align = (h.column.columnDef.meta as { align?: 'right' } | undefined)?.align;
                const sortable = onSort && COLUMN_SORTS[h.column.id];
                const direction = directionOf(h.column.id, sort);
                const Arrow =
                  direction === 'ascending' ? IconArrowUp : direction === 'descending' ? IconArrowDown : IconArrowsSort;
                return (
                  <Table.Th
                    key={h.id}
                    ta={align}
                    style={{ whiteSpace: 'nowrap' }}
                    aria-sort={sortable ? (direction ?? 'none') : undefined}
                  >
                    {sortable ? (
                      <UnstyledButton
                        onClick={() => onSort(nextSort(h.column.id, sort))}
                        fw={700}
                        fz="sm"
                        title={`Sort by ${String(h.column.columnDef.header).toLowerCase()}`}
                        style={{ display: 'inline-flex', alignItems: 'center', gap: 4 }}
                      >
                        {flexRender(h.column.columnDef.header, h.getContext())}
                        <Arrow size={14} aria-hidden opacity={direction ? 1 : 0.4} />
                      </UnstyledButton>
                    ) : (
                      flexRender(h.column.columnDef.header, h.getContext())
                    )}
                  </Table.Th>
                );
              })}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {top > 0 && <tr aria-hidden style={{ height: top }} />}
          {items.map((item) => {
            const row = table.getRowModel().rows[item.index]!;
            const r = row.original;
            return (
              <Table.Tr
                key={row.id}
                className="trace-row"
                tabIndex={0}
                aria-rowindex={item.index + 1}
                style={{
                  height: ROW_HEIGHT,
                  ...(fresh?.has(r.trace_id) && {
                    background: 'var(--mantine-primary-color-light)',
                    transition: 'background 1.5s',
                  }),
                }}
                onClick={() => onOpen(r)}
                onKeyDown={(e) => e.key === 'Enter' && e.target === e.currentTarget && onOpen(r)}
              >
                {row.getVisibleCells().map((cell) => (
                  <Table.Td
                    key={cell.id}
                    ta={(cell.column.columnDef.meta as { align?: 'right' } | undefined)?.align}
                    style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
                  >
                    {cell.column.id === 'name' ? (
                      <Anchor
                        component={Link}
                        to={linkTo(r)}
                        size="sm"
                        fw={600}
                        onClick={(e) => e.stopPropagation()}
                        title={r.trace_name ?? r.trace_id}
                      >
                        {r.trace_name || (
                          <Text span c="dimmed" size="sm" ff="monospace">
                            {r.trace_id.slice(0, 8)}
                          </Text>
                        )}
                      </Anchor>
                    ) : (
                      flexRender(cell.column.columnDef.cell, cell.getContext())
                    )}
                  </Table.Td>
                ))}
              </Table.Tr>
            );
          })}
          {bottom > 0 && <tr aria-hidden style={{ height: bottom }} />}
        </Table.Tbody>
      </Table>
    </div>
  );
}

/**
 * Which columns the table shows (the name always), remembered in this browser; and the project's content
 * columns: input, output, error message and metadata keys.
 */
export function ColumnChooser({
  content,
  onContentChange,
}: {
  content: ContentColumns & { error: boolean };
  onContentChange: (change: Partial<ContentColumns>) => void;
}) {
  const [visibility, setVisibility] = useLocalStorage<VisibilityState>({
    key: 'sightline.traceColumns',
    defaultValue: DEFAULT_HIDDEN,
  });
  const [key, setKey] = useState('');
  const newKey = key.trim();
  const canAdd = !!newKey && !content.metadata.includes(newKey) && content.metadata.length < MAX_METADATA_COLUMNS;
  const addKey = () => {
    if (!canAdd) return;
    onContentChange({ metadata: [...content.metadata, newKey] });
    setKey('');
  };
  return (
    // Focus moves into the list when it opens (it is drawn at the end of the page, out of the tab order).
    <Popover position="bottom-end" shadow="md" withArrow trapFocus>
      <Popover.Target>
        <Button variant="default" leftSection={<IconColumns size={16} />}>
          Columns
        </Button>
      </Popover.Target>
      <Popover.Dropdown maw={300}>
        <Stack gap={8} role="group" aria-label="Content columns">
          <Text size="xs" fw={700} c="dimmed">
            Content (this project)
          </Text>
          <Checkbox
            label="Input"
            checked={content.input}
            onChange={(e) => onContentChange({ input: e.currentTarget.checked })}
          />
          <Checkbox
            label="Output"
            checked={content.output}
            onChange={(e) => onContentChange({ output: e.currentTarget.checked })}
          />
          <Checkbox
            label="Error message"
            checked={content.error}
            onChange={(e) => onContentChange({ error: e.currentTarget.checked })}
          />
          {content.metadata.map((k) => (
            <Group key={k} gap={4} wrap="nowrap" justify="space-between">
              <Text size="sm" ff="monospace" truncate title={k}>
                metadata.{k}
              </Text>
              <ActionIcon
                variant="subtle"
                color="gray"
                size="sm"
                aria-label={`Remove the metadata.${k} column`}
                onClick={() => onContentChange({ metadata: content.metadata.filter((m) => m !== k) })}
              >
                <IconX size={14} />
              </ActionIcon>
            </Group>
          ))}
          <Group gap={4} wrap="nowrap" align="flex-end">
            <TextInput
              size="xs"
              label="Metadata key"
              placeholder="environment"
              value={key}
              onChange={(e) => setKey(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key !== 'Enter') return;
                e.preventDefault();
                addKey();
              }}
              style={{ flex: 1 }}
            />
            <Button size="xs" variant="default" onClick={addKey} disabled={!canAdd}>
              Add column
            </Button>
          </Group>
        </Stack>
        <Divider my="sm" />
        <Stack gap={8} role="group" aria-label="Visible columns">
          {TRACE_COLUMNS.filter((c) => c.enableHiding !== false).map((c) => (
            <Checkbox
              key={c.id}
              label={String(c.header)}
              checked={visibility[c.id!] !== false}
              onChange={(e) => {
                const shown = e.currentTarget.checked;
                setVisibility((v) => ({ ...v, [c.id!]: shown }));
              }}
            />
          ))}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}
