import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { compressSync } from 'snappy';
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

/**
 * Lines of texts, copied once into one buffer, each between `wrap`'s bytes when given; with `perLine`, that many
 * texts make a line, joined by nothing.
 */
function lines(texts: Uint8Array[], wrap?: { open: number; close: number }, perLine = 1): Buffer {
  let length = 0;
  for (const t of texts) length += t.length;
  length += (texts.length / perLine) * (wrap ? 3 : 1);
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
 * The roots of a batch that both its reads found, spans and records (a root gone between them, to retention, is in
 * neither), so that each record meets its own children.
 */
function recordedRoots(batch: ExportBatch): { id: string; record: Buffer }[] {
  const read = new Set(batch.spans.trace_id);
  return batch.rootIds.flatMap((id) => {
    const record = batch.rootRecords?.get(id);
    return record && read.has(id) ? [{ id, record }] : [];
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

// Rows a row group holds at least (the last one aside): readers skip and read a file by its row groups. The
// writer keeps every row group's metadata until the footer, so fewer groups hold less; a larger group keeps more
// values alive while it fills, and they outlive V8's young generation. 500 measured best (a million spans).
const ROW_GROUP_ROWS = 500;

// Columns written without min/max statistics. Readers skip row groups by time and by numbers; bounds of ids,
// names and JSON texts skip nothing in an export in time order, and a bound per text column of every row group,
// kept until the footer, held about 100 MB over a million rows (measured with the writer alone).
const PARQUET_UNSTATED = new Set<Field['type']>(['uuid', 'text', 'jsonb', 'text[]']);

/**
 * Parquet: each span's values as PostgreSQL typed them (the `values` form); a trace's row is its root's, then
 * `children` as text. Snappy compresses in compiled code (the writer's own, in JavaScript, took a third of its
 * time).
 */
function parquet(shape: TraceExportShape): FileEncoder {
  const fields = fieldsOf(shape);
  const isTimestamp = fields.map((f) => f.type === 'timestamp');
  // The next row group's values, a column at a time.
  let pending: unknown[][] = fields.map(() => []);
  const columnData = () =>
    fields.map((f, c) => ({
      name: f.name,
      type: PARQUET_TYPE[f.type],
      data: pending[c]!,
      statistics: !PARQUET_UNSTATED.has(f.type),
    }));
  // The bytes are taken from the writer's buffer after each row group: a file of any size holds one at most.
  const out = new ByteWriter();
  const writer = new ParquetWriter({
    writer: out,
    schema: schemaFromColumnData({ columnData: columnData() }),
    compressors: { SNAPPY: compressSync },
  });
  const flush = () => {
    const rows = pending[0]!.length;
    if (rows) void writer.write({ columnData: columnData(), rowGroupSize: rows });
    pending = fields.map(() => []);
    const bytes = Buffer.from(out.getBytes());
    out.index = 0;
    return bytes;
  };
  const add = (values: unknown[]) =>
    values.forEach((v, c) => pending[c]!.push(v !== null && isTimestamp[c] ? new Date(v as number) : v));
  return {
    reading: shape === 'spans' ? { form: 'values' } : { form: 'json', rootRecords: 'values' },
    batch(batch) {
      if (shape === 'spans') valueRows(spansInOrder(batch)).forEach(add);
      else {
        const roots = recordedRoots(batch);
        const children = childrenOf(batch, roots);
        valueRows(roots.map((r) => r.record)).forEach((values, r) => add([...values, children[r]!.toString('utf8')]));
      }
      const bytes = pending[0]!.length >= ROW_GROUP_ROWS ? flush() : Buffer.alloc(0);
      return { bytes, ...counted(batch) };
    },
    end() {
      const last = flush();
      void writer.finish();
      return Buffer.concat([last, Buffer.from(out.getBytes())]);
    },
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
