import { Anchor, Checkbox, Popover, Button, Stack, Table, Text } from '@mantine/core';
import { useLocalStorage } from '@mantine/hooks';
import { IconColumns } from '@tabler/icons-react';
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
import { useMemo, useRef } from 'react';
import { Link } from 'react-router';
import type { TraceRow } from '../../../api/types';
import { Chips, scoreChips, StatusBadge } from '../../../components/TraceCells';
import { Timestamp } from '../../../components/ui/Timestamp';
import { formatCost, formatCount, formatLatency, formatScore, formatTokens } from '../../../lib/format';

const column = createColumnHelper<TraceRow>();
const mono = { ff: 'monospace', size: 'sm' } as const;

/** The table's columns; `size` is the width in pixels (fixed layout: virtual rows never change widths). */
const TRACE_COLUMNS = [
  column.accessor('trace_name', { id: 'name', header: 'Name', size: 220, enableHiding: false }),
  column.accessor('start_timestamp', {
    id: 'start',
    header: 'Start',
    size: 130,
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
        {formatTokens(r.input_tokens, r.output_tokens, r.total_tokens)}
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
        {formatCost(c.getValue())}
      </Text>
    ),
  }),
  column.accessor('status', {
    id: 'status',
    header: 'Status',
    // Wide enough for "SUCCESS" in a wide fallback font (DejaVu Sans): a cut status reads as another one.
    size: 104,
    cell: ({ row: { original: r } }) => <StatusBadge status={r.status} error={r.error} />,
  }),
  column.accessor('scores', {
    id: 'scores',
    header: 'Scores',
    size: 240,
    cell: (c) => <Chips items={scoreChips(c.getValue())} color="indigo" />,
  }),
  column.accessor('tags', { id: 'tags', header: 'Tags', size: 150, cell: (c) => <Chips items={c.getValue()} /> }),
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
}: Props) {
  const [visibility, setVisibility] = useLocalStorage<VisibilityState>({
    key: 'sightline.traceColumns',
    defaultValue: DEFAULT_HIDDEN,
  });
  const selectable = !!selection;
  const columns = useMemo(() => (selectable ? [SELECT_COLUMN, ...TRACE_COLUMNS] : TRACE_COLUMNS), [selectable]);
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
              .map((h) => (
                <Table.Th
                  key={h.id}
                  ta={(h.column.columnDef.meta as { align?: 'right' } | undefined)?.align}
                  style={{ whiteSpace: 'nowrap' }}
                >
                  {flexRender(h.column.columnDef.header, h.getContext())}
                </Table.Th>
              ))}
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

/** Which columns the table shows (the name always), remembered in this browser. */
export function ColumnChooser() {
  const [visibility, setVisibility] = useLocalStorage<VisibilityState>({
    key: 'sightline.traceColumns',
    defaultValue: DEFAULT_HIDDEN,
  });
  return (
    // Focus moves into the list when it opens (it is drawn at the end of the page, out of the tab order).
    <Popover position="bottom-end" shadow="md" withArrow trapFocus>
      <Popover.Target>
        <Button variant="default" leftSection={<IconColumns size={16} />}>
          Columns
        </Button>
      </Popover.Target>
      <Popover.Dropdown>
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
