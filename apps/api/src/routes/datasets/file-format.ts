import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { CsvError, parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { columnMismatch, escapeFormula, RESERVED_COLUMNS, storableText } from '@sightline/core';
import type { TestCase } from '@sightline/db';
import { TestCaseSchema, type TestCaseInput } from '@sightline/schemas';
import { RequestValidationError, type ValidationDetail } from '../../errors';

// A dataset as a file, both ways. CSV: a header of the input columns, then `target` and `tags`; a cell holds
// the value's text (a value that is not a string, as JSON), tags are a JSON array of strings, an empty target
// cell is no target. JSONL: one {inputs, target, tags} object a line.

export const MAX_IMPORT_ROWS = 100_000;
// Bad rows spelled out in a refusal; the rest are counted in one last entry.
const MAX_LISTED_ROWS = 100;
// Each takes milliseconds to parse: other requests wait no longer than that.
const CSV_SLICE_BYTES = 64 * 1024;
const YIELD_EVERY_ROWS = 1000;

const CONTENT = ['body', 'content'];

type Problem = { path: (string | number)[]; msg: string; type: string };
/** A data row of a file (numbered from 1): the test case it holds, or why it holds none. */
type FileRow = { row: number } & ({ value: unknown } | { problem: Problem });

const cell = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * What a CSV export does with a cell a spreadsheet would run as a formula: `escape` prefixes it with `'`
 * (escapeFormula); `keep` writes it as it is, for a file that is imported again and never opened in a spreadsheet.
 */
type CsvFormulas = 'escape' | 'keep';

export async function* csvFile(
  columns: string[],
  chunks: AsyncIterable<TestCase[]>,
  formulas: CsvFormulas = 'escape',
): AsyncGenerator<string> {
  // Every string cell, the header's column names too: a dataset's column can be named `=...`.
  const options = formulas === 'escape' ? { cast: { string: escapeFormula } } : {};
  yield stringify([[...columns, 'target', 'tags']], options);
  for await (const chunk of chunks) {
    const records = chunk.map((c) => [...columns.map((col) => cell(c.inputs[col])), c.target, JSON.stringify(c.tags)]);
    yield stringify(records, options);
  }
}

export async function* jsonlFile(chunks: AsyncIterable<TestCase[]>): AsyncGenerator<string> {
  for await (const chunk of chunks) {
    yield chunk.map((c) => `${JSON.stringify({ inputs: c.inputs, target: c.target, tags: c.tags })}\n`).join('');
  }
}

/**
 * The test cases of an imported file, every row checked against the dataset's columns. Throws a
 * RequestValidationError naming each bad row (`['body', 'content', 'row', n, ...]`) when any is bad. Rows
 * are read a few at a time, letting other requests run between them: 10 MB of CSV take a second or two of CPU.
 */
export async function parseImport(format: 'csv' | 'jsonl', content: string, columns: string[]) {
  const cases: TestCaseInput[] = [];
  const problems: ValidationDetail[] = [];
  let rows = 0;
  let badRows = 0;
  for await (const { row, ...found } of format === 'csv' ? csvRows(content, columns) : jsonlRows(content)) {
    if (++rows > MAX_IMPORT_ROWS) {
      const msg = `more than ${MAX_IMPORT_ROWS} rows: import them in parts`;
      throw new RequestValidationError([{ loc: CONTENT, msg, type: 'too_big' }]);
    }
    if (rows % YIELD_EVERY_ROWS === 0) await setImmediate();
    const checked = 'value' in found ? checkCase(found.value, columns) : [found.problem];
    if (!Array.isArray(checked)) cases.push(checked);
    else if (++badRows <= MAX_LISTED_ROWS) {
      problems.push(...checked.map((p) => ({ loc: [...CONTENT, 'row', row, ...p.path], msg: p.msg, type: p.type })));
    }
  }
  if (badRows > MAX_LISTED_ROWS) {
    const msg = `${badRows - MAX_LISTED_ROWS} more rows are invalid (the first ${MAX_LISTED_ROWS} are listed)`;
    problems.push({ loc: CONTENT, msg, type: 'too_many_errors' });
  }
  if (problems.length) throw new RequestValidationError(problems);
  return cases;
}

/** A row's test case under the rules of POST /testcases, with its text made storable; or its problems. */
function checkCase(value: unknown, columns: string[]): TestCaseInput | Problem[] {
  const parsed = TestCaseSchema.safeParse(value);
  if (!parsed.success) {
    return parsed.error.issues.map((issue) => ({
      path: issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
      msg: issue.message,
      type: issue.code,
    }));
  }
  const mismatch = columnMismatch(columns, parsed.data.inputs, true);
  if (mismatch) return [{ path: ['inputs'], msg: mismatch, type: 'value_error' }];
  // JSON escapes in a JSONL line or a tags cell can spell NUL or a lone surrogate, which PostgreSQL refuses.
  const { inputs, target, tags } = parsed.data;
  return {
    inputs: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, storableText(v)])),
    target: target == null ? null : storableText(target),
    tags: tags?.map(storableText) ?? [],
  };
}

/** JSONL: a row is a line (numbered as an editor numbers it); blank lines are skipped. */
function* jsonlRows(content: string): Generator<FileRow> {
  const lines = content.split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    try {
      yield { row: i + 1, value: JSON.parse(line) };
    } catch (err) {
      yield { row: i + 1, problem: { path: [], msg: `invalid JSON: ${(err as Error).message}`, type: 'json_invalid' } };
    }
  }
}

type CsvLayout = { width: number; inputs: [string, number][]; target: number; tags: number };

/** CSV: a row is a record after the header (a quoted value may span lines); blank lines are skipped. */
async function* csvRows(content: string, columns: string[]): AsyncGenerator<FileRow> {
  // Slices of bytes, not of the string: csv-parse joins a character split between two of them.
  const bytes = Buffer.from(content);
  const slices = Array.from({ length: Math.ceil(bytes.length / CSV_SLICE_BYTES) }, (_, i) =>
    bytes.subarray(i * CSV_SLICE_BYTES, (i + 1) * CSV_SLICE_BYTES),
  );
  // Rows of the wrong width are reported one by one rather than ending the parse.
  const parser = Readable.from(slices).pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: true }));
  let layout: CsvLayout | undefined;
  let row = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      if (layout) yield { row: ++row, ...csvRow(cells, layout) };
      else layout = csvLayout(cells, columns);
    }
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    // The records before the bad one, the header included (an error may overtake rows not yet read here).
    const at = err.records ? ['row', err.records as number] : ['header'];
    throw new RequestValidationError([{ loc: [...CONTENT, ...at], msg: err.message, type: 'csv_invalid' }]);
  }
  if (!layout) csvLayout([], columns);
}

/** Where each column is (-1: absent); throws when the header does not name the dataset's columns. */
function csvLayout(header: string[], columns: string[]): CsvLayout {
  const repeated = header.filter((name, i) => header.indexOf(name) !== i);
  const inputNames = header.filter((name) => !RESERVED_COLUMNS.has(name));
  const mismatch = columnMismatch(columns, Object.fromEntries(inputNames.map((name) => [name, ''])), true);
  const msg = repeated.length ? `repeated column(s): ${[...new Set(repeated)].join(', ')}` : mismatch;
  if (msg) throw new RequestValidationError([{ loc: [...CONTENT, 'header'], msg, type: 'value_error' }]);
  return {
    width: header.length,
    inputs: inputNames.map((name) => [name, header.indexOf(name)]),
    target: header.indexOf('target'),
    tags: header.indexOf('tags'),
  };
}

function csvRow(cells: string[], layout: CsvLayout): { value: unknown } | { problem: Problem } {
  if (cells.length !== layout.width) {
    const msg = `${cells.length} fields where the header has ${layout.width}`;
    return { problem: { path: [], msg, type: 'csv_invalid' } };
  }
  const tagsText = cells[layout.tags] ?? '';
  let tags: unknown = [];
  try {
    if (tagsText) tags = JSON.parse(tagsText);
  } catch {
    return {
      problem: { path: ['tags'], msg: 'tags must be a JSON array of strings, as ["a","b"]', type: 'json_invalid' },
    };
  }
  return {
    value: {
      inputs: Object.fromEntries(layout.inputs.map(([name, i]) => [name, cells[i]])),
      // An empty target cell is no target (telling `""` from nothing would need csv-parse's per-field cast,
      // which makes reading a file seven times slower).
      target: cells[layout.target] || null,
      tags,
    },
  };
}
