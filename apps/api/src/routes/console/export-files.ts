import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { compressSync } from 'snappy';
import { ParquetFooter } from './parquet-footer';
import { renderChildren, renderTrees, treeOrder } from '@sightline/core';
import { CSV_HEADER, SPAN_FIELDS, type ExportBatch, type ExportReading } from '@sightline/db';
import type { TraceExportFormat, TraceExportShape } from '@sightline/schemas';

// Traces as a file, a batch at a time. JSONL: a trace (its spans nested under `children`) or a span a line, in
// the API's shape, exactly as GET /trace_log/{id} writes it. CSV and Parquet: a column per span field; a trace's
// row is its root's, with its spans nested in `children` (JSON); JSON fields are JSON text; Parquet keeps the
// types (timestamps, integers, doubles, booleans). PostgreSQL writes what it can (the JSON texts, the CSV
// records, the typed values): Node only puts the bytes in order, which is what lets an export go at the
// database's pace.

type Field = (typeof SPAN_FIELDS)[number] | { name: 'children'; type: 'jsonb' };

export type FileEncoder = {
  /** What each batch must carry. */
  reading: Pick<ExportReading, 'form' | 'rootRecords'>;
  /** The bytes of a batch, and what it held. */
  batch(batch: ExportBatch): { bytes: Buffer; traces: number; spans: number };
  /** The bytes that close the file. */
  end(): Buffer;
};

const fieldsOf = (shape: TraceExportShape): Field[] =>
  shape === 'traces' ? [...SPAN_FIELDS, { name: 'children', type: 'jsonb' }] : [...SPAN_FIELDS];

const NEWLINE = Buffer.from('\n');

/** A batch's spans in order, trace after trace in the listing's order, each trace's in its tree's order. */
const spansInOrder = ({ rootIds, spans }: ExportBatch) => treeOrder(spans, rootIds).map((i) => spans.members[i]!);

const BRACES = { open: 0x7b, close: 0x7d };

const sizeOf = (texts: Uint8Array[]) => texts.reduce((sum, t) => sum + t.length, 0);

/**
 * Lines of texts, copied once into one buffer, each between `wrap`'s bytes when given; with `perLine`, that many
 * texts make a line, joined by nothing.
 */
function lines(texts: Uint8Array[], wrap?: { open: number; close: number }, perLine = 1): Buffer {
  const length = sizeOf(texts) + (texts.length / perLine) * (wrap ? 3 : 1);
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const [i, t] of texts.entries()) {
    if (wrap) out[at++] = wrap.open;
    out.set(t, at);
    at += t.length;
    if (wrap) out[at++] = wrap.close;
    if ((i + 1) % perLine === 0) out[at++] = 0x0a; // \n
  }
  return out;
}

/**
 * The values of each span (members in the `values` form: a JSON array's text without its brackets), parsed in one
 * go: one JSON text for a whole batch costs far less than a parse per span.
 */
function valueRows(texts: Uint8Array[]): unknown[][] {
  if (!texts.length) return [];
  const parts: Uint8Array[] = [];
  for (const [i, t] of texts.entries()) parts.push(i ? BETWEEN_ROWS : OPEN_ROWS, t);
  parts.push(CLOSE_ROWS);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown[][];
}
const OPEN_ROWS = Buffer.from('[['),
  BETWEEN_ROWS = Buffer.from('],['),
  CLOSE_ROWS = Buffer.from(']]');

/**
 * The roots of a batch that its read found (one gone to retention since the listing was read is not), with their
 * records.
 */
function recordedRoots(batch: ExportBatch): { id: string; record: Buffer }[] {
  return batch.rootIds.flatMap((id) => {
    const record = batch.rootRecords?.get(id);
    return record ? [{ id, record }] : [];
  });
}

/** The children of each of `roots` as renderChildren writes them (a JSON array), in order. */
function childrenOf(batch: ExportBatch, roots: { id: string }[]): Buffer[] {
  const children = renderChildren(
    batch.spans,
    roots.map((r) => r.id),
  );
  const texts: Buffer[] = [];
  for (let from = 0; texts.length < roots.length;) {
    const end = children.indexOf(0x0a, from);
    texts.push(children.subarray(from, end === -1 ? children.length : end));
    from = end + 1;
  }
  return texts;
}

const counted = (batch: ExportBatch) => ({ traces: batch.rootIds.length, spans: batch.spans.trace_id.length });

function jsonl(shape: TraceExportShape): FileEncoder {
  return {
    reading: { form: 'json' },
    batch(batch) {
      if (shape === 'spans') return { bytes: lines(spansInOrder(batch), BRACES), ...counted(batch) };
      const trees = renderTrees(batch.spans, batch.rootIds, '\n');
      return { bytes: trees.length ? Buffer.concat([trees, NEWLINE]) : trees, ...counted(batch) };
    },
    end: () => Buffer.alloc(0),
  };
}

/**
 * CSV: each span's record as PostgreSQL wrote it (CSV_RECORD); a trace's is its root's, then `children`, the JSON
 * of its spans as renderChildren writes it from texts whose quotes PostgreSQL doubled: a cell Node only copies.
 * It needs no guard against formulas: it is a JSON array, which starts with `[`.
 */
function csv(shape: TraceExportShape): FileEncoder {
  let header: string | null = shape === 'spans' ? `${CSV_HEADER}\n` : `${CSV_HEADER},children\n`;
  const withHeader = (bytes: Buffer) => {
    const out = header === null ? bytes : Buffer.concat([Buffer.from(header), bytes]);
    header = null;
    return out;
  };
  return {
    reading: shape === 'spans' ? { form: 'csv' } : { form: 'json-in-csv', rootRecords: 'csv' },
    batch(batch) {
      if (shape === 'spans') return { bytes: withHeader(lines(spansInOrder(batch))), ...counted(batch) };
      const roots = recordedRoots(batch);
      const children = childrenOf(batch, roots);
      const cells = roots.flatMap(({ record }, r) => [record, CELL_OPEN, children[r]!, CELL_CLOSE]);
      return { bytes: withHeader(lines(cells, undefined, 4)), ...counted(batch) };
    },
    end: () => withHeader(Buffer.alloc(0)),
  };
}
const CELL_OPEN = Buffer.from(',"'),
  CELL_CLOSE = Buffer.from('"');

const PARQUET_TYPE = {
  uuid: 'STRING',
  text: 'STRING',
  jsonb: 'STRING',
  'text[]': 'STRING',
  timestamp: 'TIMESTAMP',
  integer: 'INT32',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
} as const;

// The size, in the texts its rows came from, that closes a row group: readers skip and read a file by its row
// groups, and the values of a group being filled are held as JavaScript values, which outlive V8's young
// generation. About one batch of the by-span export (500 spans), and one of the by-trace one (100 traces).
const ROW_GROUP_BYTES = 512 * 1024;

// Columns written without min/max statistics. Readers skip row groups by time and by numbers; bounds of ids,
// names and JSON texts skip nothing in an export in time order, and they cost the writer time and memory (measured
// in docs/benchmarks-notes.md, "Trace export").
const PARQUET_UNSTATED = new Set<Field['type']>(['uuid', 'text', 'jsonb', 'text[]']);

/**
 * Parquet: each span's values as PostgreSQL typed them (the `values` form); a trace's row is its root's, then
 * `children` as text. Snappy compresses in compiled code (the writer's own, in JavaScript, took a third of its
 * time).
 */
function parquet(shape: TraceExportShape): FileEncoder {
  const fields = fieldsOf(shape);
  // The next row group's values, a column at a time, and the size of the texts they came from.
  let pending: unknown[][] = fields.map(() => []);
  let pendingBytes = 0;
  const columnData = () =>
    fields.map((f, c) => ({
      name: f.name,
      type: PARQUET_TYPE[f.type],
      data: pending[c]!,
      statistics: !PARQUET_UNSTATED.has(f.type),
      // No page index: the writer would write it at finish(), which ParquetFooter replaces; and a group's column
      // mostly fits in one page (of 1 MB), which an index would not narrow.
      offsetIndex: false,
    }));
  // The bytes are taken from the writer's buffer after each row group: a file of any size holds one at most. Each
  // group's metadata goes to the footer as bytes (see ParquetFooter), so the writer never finishes the file itself.
  const out = new ByteWriter();
  const writer = new ParquetWriter({
    writer: out,
    schema: schemaFromColumnData({ columnData: columnData() }),
    compressors: { SNAPPY: compressSync },
  });
  const footer = new ParquetFooter(writer.schema, writer.createdBy);
  const flush = () => {
    const rows = pending[0]!.length;
    if (rows) void writer.write({ columnData: columnData(), rowGroupSize: rows });
    for (const group of writer.row_groups.splice(0)) footer.add(group);
    writer.pendingIndexes.length = 0;
    pending = fields.map(() => []);
    pendingBytes = 0;
    const bytes = Buffer.from(out.getBytes());
    out.index = 0;
    return bytes;
  };
  // Timestamps stay epoch milliseconds: the writer takes them as they are.
  const add = (values: unknown[]) => values.forEach((v, c) => pending[c]!.push(v));
  return {
    reading: shape === 'spans' ? { form: 'values' } : { form: 'json', rootRecords: 'values' },
    batch(batch) {
      if (shape === 'spans') {
        const texts = spansInOrder(batch);
        valueRows(texts).forEach(add);
        pendingBytes += sizeOf(texts);
      } else {
        const roots = recordedRoots(batch);
        const records = roots.map((r) => r.record);
        const children = childrenOf(batch, roots);
        valueRows(records).forEach((values, r) => add([...values, children[r]!.toString('utf8')]));
        pendingBytes += sizeOf(records) + sizeOf(children);
      }
      const bytes = pendingBytes >= ROW_GROUP_BYTES ? flush() : Buffer.alloc(0);
      return { bytes, ...counted(batch) };
    },
    end: () => Buffer.concat([flush(), footer.bytes()]),
  };
}

export const FILE_ENCODERS: Record<TraceExportFormat, (shape: TraceExportShape) => FileEncoder> = {
  jsonl,
  csv,
  parquet,
};

export const CONTENT_TYPES: Record<TraceExportFormat, string> = {
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};
