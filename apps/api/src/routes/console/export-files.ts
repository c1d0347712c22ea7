import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { renderChildren, renderTrees, treeOrder } from '@sightline/core';
import { CSV_HEADER, SPAN_FIELDS, type ExportBatch, type ExportReading } from '@sightline/db';
import type { TraceExportFormat, TraceExportShape } from '@sightline/schemas';

// Traces as a file, a batch at a time. JSONL: a trace (its spans nested under `children`) or a span a line, in
// the API's shape, exactly as GET /trace_log/{id} writes it. CSV and Parquet: a column per span field; a trace's
// row is its root's, with its spans nested in `children` (JSON); JSON fields are JSON text; Parquet keeps the
// types (timestamps, integers, doubles, booleans). PostgreSQL writes what it can (the JSON texts, the CSV
// records): Node only puts the bytes in order, which is what lets an export go at the database's pace.

type Field = (typeof SPAN_FIELDS)[number] | { name: 'children'; type: 'jsonb' };
type Span = Record<string, unknown> & { children?: unknown };

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
 * `,"<text>"`: a CSV cell after others, its quotes doubled, on the bytes. Never guarded against formulas: it is a
 * JSON array, which starts with `[`.
 */
function quotedCell(text: Uint8Array): Buffer {
  const bytes = Buffer.from(text.buffer, text.byteOffset, text.length);
  let quotes = 0;
  for (let q = bytes.indexOf(0x22); q !== -1; q = bytes.indexOf(0x22, q + 1)) quotes++;
  const out = Buffer.allocUnsafe(bytes.length + quotes + 3);
  out[0] = 0x2c; // ,
  out[1] = 0x22;
  let at = 2;
  let from = 0;
  for (let q = bytes.indexOf(0x22); q !== -1; q = bytes.indexOf(0x22, q + 1)) {
    at += bytes.copy(out, at, from, q + 1);
    out[at++] = 0x22;
    from = q + 1;
  }
  at += bytes.copy(out, at, from);
  out[at] = 0x22;
  return out;
}

/** A batch as objects: a span each, or a trace each (its root's fields and `children`). */
function records(batch: ExportBatch, shape: TraceExportShape): Span[] {
  if (shape === 'spans')
    return spansInOrder(batch).map((m) => JSON.parse(`{${Buffer.from(m).toString('utf8')}}`) as Span);
  const text = renderTrees(batch.spans, batch.rootIds, '\n').toString('utf8');
  return text ? text.split('\n').map((line) => JSON.parse(line) as Span) : [];
}

/** A field's value as text in a cell: JSON for what is not a string or a number. */
function cellText(value: unknown, field: Field): unknown {
  if (value === null || value === undefined) return null;
  return field.type === 'jsonb' || field.type === 'text[]' ? JSON.stringify(value) : value;
}

const counted = (batch: ExportBatch) => ({ traces: batch.rootIds.length, spans: batch.spans.trace_id.length });

function jsonl(shape: TraceExportShape): FileEncoder {
  return {
    reading: { form: 'json', rootRecords: false },
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
 * of its spans as renderChildren writes it, quoted and guarded here as the database guards the others.
 */
function csv(shape: TraceExportShape): FileEncoder {
  let header: string | null = shape === 'spans' ? `${CSV_HEADER}\n` : `${CSV_HEADER},children\n`;
  const withHeader = (bytes: Buffer) => {
    const out = header === null ? bytes : Buffer.concat([Buffer.from(header), bytes]);
    header = null;
    return out;
  };
  return {
    reading: shape === 'spans' ? { form: 'csv', rootRecords: false } : { form: 'json', rootRecords: true },
    batch(batch) {
      if (shape === 'spans') return { bytes: withHeader(lines(spansInOrder(batch))), ...counted(batch) };
      // The roots both reads found (a root gone between them, to retention, is in neither), so that each record
      // meets its own children.
      const read = new Set(batch.spans.trace_id);
      const roots = batch.rootIds.filter((id) => read.has(id) && batch.rootRecords!.has(id));
      const children = renderChildren(batch.spans, roots);
      const rows: Buffer[] = [];
      let from = 0;
      for (const record of roots.map((id) => batch.rootRecords!.get(id)!)) {
        const end = children.indexOf(0x0a, from);
        rows.push(record, quotedCell(children.subarray(from, end === -1 ? children.length : end)));
        from = end + 1;
      }
      return { bytes: withHeader(lines(rows, undefined, 2)), ...counted(batch) };
    },
    end: () => withHeader(Buffer.alloc(0)),
  };
}

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

/** The API's `YYYY-MM-DD HH:MM:SS` (UTC) as a Date. */
const dateOf = (text: unknown) => (typeof text === 'string' ? new Date(`${text.replace(' ', 'T')}Z`) : null);

// Rows a row group holds at least (the last one aside): readers skip and read a file by its row groups.
const ROW_GROUP_ROWS = 2_000;

function parquet(shape: TraceExportShape): FileEncoder {
  const fields = fieldsOf(shape);
  const valueOf = (f: Field, r: Span) => (f.type === 'timestamp' ? dateOf(r[f.name]) : cellText(r[f.name], f));
  // The next row group's values, a column at a time.
  let pending: unknown[][] = fields.map(() => []);
  const columnData = () => fields.map((f, c) => ({ name: f.name, type: PARQUET_TYPE[f.type], data: pending[c]! }));
  // The bytes are taken from the writer's buffer after each row group: a file of any size holds one at most.
  const out = new ByteWriter();
  const writer = new ParquetWriter({ writer: out, schema: schemaFromColumnData({ columnData: columnData() }) });
  const flush = () => {
    const rows = pending[0]!.length;
    if (rows) void writer.write({ columnData: columnData(), rowGroupSize: rows });
    pending = fields.map(() => []);
    const bytes = Buffer.from(out.getBytes());
    out.index = 0;
    return bytes;
  };
  return {
    reading: { form: 'json', rootRecords: false },
    batch(batch) {
      for (const r of records(batch, shape)) fields.forEach((f, c) => pending[c]!.push(valueOf(f, r)));
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
