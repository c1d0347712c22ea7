// Spans read as the JSON text PostgreSQL writes for them: a whole trace, the traces under some roots, one span.
// Apart from the write path, with which it shares nothing: its columns are the API's shape, not the store's.
import { API_TREES, FORMULA_STARTS, type SpanTexts, type TreeDialect } from '@sightline/core';
import type { Sql } from './client';

// The fields of a trace log as the API returns them, with their SQL types. Timestamps go out as
// `YYYY-MM-DD HH:MM:SS` in UTC; `declared` is the client's list of child ids, which the tree replaces.
type ReadType = 'uuid' | 'text' | 'integer' | 'float' | 'boolean' | 'text[]' | 'jsonb' | 'timestamp' | 'declared';
type ReadColumn = { name: string; sql: string; type: ReadType };
const START = 'coalesce(s.start_ts, s.created_at)';
const READ: readonly ReadColumn[] = [
  ...columns('uuid', 'trace_id root_trace_id parent_trace_id'),
  ...columns('text', 'trace_name'),
  { name: 'project_uuid', sql: 's.project_id', type: 'uuid' },
  { name: 'project_name', sql: 'p.name', type: 'text' },
  ...columns('uuid', 'organization_id'),
  ...columns('jsonb', 'inputs'),
  ...columns('text', 'output target'),
  // The Python client needs a start on every span: one sent without reads as starting when first stored.
  { name: 'start_timestamp', sql: START, type: 'timestamp' },
  { name: 'end_timestamp', sql: 's.end_ts', type: 'timestamp' },
  ...columns('text', 'status error'),
  ...columns('jsonb', 'configuration metadata'),
  ...columns('text[]', 'tags'),
  ...columns('integer', 'depth execution_order'),
  ...columns('float', 'time_to_first_token latency'),
  ...columns('integer', 'input_tokens output_tokens total_tokens'),
  ...columns('float', 'cost'),
  { name: 'usage_estimated', sql: 'coalesce(s.usage_estimated, false)', type: 'boolean' },
  ...columns('text', 'output_for_eval_metrics'),
  ...columns('text[]', 'evaluation_metric_names'),
  orEmpty('scores', '[]'),
  ...columns('float', 'feedback_score'),
  ...columns('text', 'feedback_comment'),
  ...columns('declared', 'children_ids'),
  { name: 'apply_eval_frac', sql: 'coalesce(s.apply_eval_frac, 1)', type: 'float' },
  { name: 'log_sample_rate', sql: 'coalesce(s.log_sample_rate, 1)', type: 'float' },
  ...columns('text', 'deployment_id'),
  ...columns('boolean', 'cache_hit'),
  ...columns('text', 'end_user_identifier session_id'),
  ...columns('uuid', 'experiment_uuid'),
  orEmpty('images', '[]'),
  orEmpty('comments', '[]'),
  orEmpty('annotations', '{}'),
];
/** The fields of a span as the API writes them, with their types (a span's columns in a file). */
export const SPAN_FIELDS: readonly { name: string; type: Exclude<ReadType, 'declared'> }[] = READ.filter(
  (c): c is ReadColumn & { type: Exclude<ReadType, 'declared'> } => c.type !== 'declared',
).map(({ name, type }) => ({ name, type }));

function columns(type: ReadType, names: string): ReadColumn[] {
  return names.split(' ').map((name) => ({ name, sql: `s.${name}`, type }));
}
/** The clients iterate these collections whenever the key is present: none reads as empty, never null. */
function orEmpty(name: string, empty: '[]' | '{}'): ReadColumn {
  return { name, sql: `coalesce(s.${name}, '${empty}'::jsonb)`, type: 'jsonb' };
}

const wireTimestamp = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
/**
 * SQL for the JSON text of one field, as JSON.stringify would write its value; SQL null when the field has
 * none. Each type takes its cheapest exact path: uuids and formatted timestamps need no escaping, numbers
 * and booleans are their own text (NaN and infinities, which JSON lacks, have none), and only free text goes
 * through to_json. With `quote` `""`, every `"` of the text is doubled (for a CSV cell): the quotes this SQL writes
 * are written doubled, and only the texts that can hold others go through replace(), which scanning a whole span's
 * JSON for them cost PostgreSQL twice as much.
 */
function jsonValue({ sql: e, type }: ReadColumn, quote: Quote = '"'): string {
  const escaped = (text: string) => (quote === '"' ? text : `replace(${text}, '"', '""')`);
  switch (type) {
    case 'jsonb':
      return escaped(`${e}::text`);
    case 'timestamp':
      return `'${quote}' || ${wireTimestamp(e)} || '${quote}'`;
    case 'uuid':
      return `'${quote}' || ${e} || '${quote}'`;
    case 'float':
      return `(case when ${e} in ('NaN', 'Infinity', '-Infinity') then null else ${e} end)::text`;
    case 'integer':
    case 'boolean':
      return `${e}::text`;
    case 'text[]':
      return escaped(`array_to_json(${e})::text`);
    default:
      return escaped(`to_json(${e})::text`);
  }
}
type Quote = '"' | '""';
// Spans serialized by PostgreSQL as it reads them: `members` is a span's JSON without its braces. This costs
// PostgreSQL less than sending the columns costs Node to parse; Node only nests the spans, and the bytes go
// from the socket to the answer without becoming strings. concat_ws() takes each piece once (a chain of ||
// would copy the growing text at every step) and skips the null ones: a field without a value is written
// as null, or left out in a dialect that omits nulls.
const membersSql = (omitNulls: boolean, quote: Quote) =>
  `concat_ws(',', ${READ.filter((c) => c.type !== 'declared')
    .map((c) => {
      const value = jsonValue(c, quote);
      return `'${quote}${c.name}${quote}:' || ${omitNulls ? value : `coalesce(${value}, 'null')`}`;
    })
    .join(', ')})`;
const membersBy = (quote: Quote) => ({ withNulls: membersSql(false, quote), withoutNulls: membersSql(true, quote) });
const MEMBERS = { json: membersBy('"'), 'json-in-csv': membersBy('""') };
/** SQL: the JSON text of span `s` (joined to its project `p`) in the API's shape, without its children. */
export const SPAN_JSON_SQL = `'{' || ${MEMBERS.json.withNulls} || '}'`;

// The first characters of a formula (FORMULA_STARTS), as the character codes ascii() gives.
const FORMULA_CODES = FORMULA_STARTS.map((c) => c.codePointAt(0)).join(', ');
const guarded = (text: string) =>
  `case when ascii(${text}) in (${FORMULA_CODES}) then '''' || ${text} else ${text} end`;

/**
 * SQL: a field's value in a CSV record, guarded against formulas where it can start like one. Only the first
 * character is looked at: a regular expression converted each text whole for it, and cost PostgreSQL a fifth of a
 * record. Of the JSON fields only a number can start like one (with `-`); a list's JSON starts with `[`.
 */
function csvValue(c: ReadColumn): string {
  switch (c.type) {
    case 'text':
      return guarded(c.sql);
    case 'jsonb':
      return `case when jsonb_typeof(${c.sql}) = 'number' then ${guarded(`${c.sql}::text`)} else ${c.sql}::text end`;
    case 'text[]':
      return `array_to_json(${c.sql})::text`;
    case 'timestamp':
      return wireTimestamp(c.sql);
    case 'uuid':
      return `${c.sql}::text`;
    default:
      return jsonValue(c);
  }
}

/**
 * SQL: a CSV record (RFC 4180, every value quoted, nothing for null) of the JSON fields' values as text, numbers
 * as their digits, JSON as JSON. A text that a spreadsheet would run as a formula (one starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return: FORMULA_STARTS) gets a `'` in front, as escapeFormula does in Node.
 */
const CSV_RECORD = `concat_ws(',', ${READ.filter((c) => c.type !== 'declared')
  .map((c) => `coalesce('"' || replace(${csvValue(c)}, '"', '""') || '"', '')`)
  .join(', ')})`;
/** The header of CSV_RECORD's records. */
export const CSV_HEADER = READ.filter((c) => c.type !== 'declared')
  .map((c) => c.name)
  .join(',');

/**
 * SQL: the values of span `s`'s fields in SPAN_FIELDS' order, as a JSON array's text without its brackets, typed as
 * a Parquet file's columns take them: JSON fields as their text (a JSON string), timestamps as epoch milliseconds
 * (to the second, as the API writes them), numbers, booleans and text as themselves. Node then parses a batch's
 * spans in one go, to flat values, where the JSON fields would otherwise be parsed and written again.
 */
const VALUES = `concat_ws(',', ${READ.filter((c) => c.type !== 'declared')
  .map((c) => {
    const value =
      c.type === 'jsonb'
        ? `to_json(${c.sql}::text)::text`
        : c.type === 'text[]'
          ? `to_json(array_to_json(${c.sql})::text)::text`
          : c.type === 'timestamp'
            ? `(extract(epoch from date_trunc('second', ${c.sql})) * 1000)::bigint::text`
            : jsonValue(c);
    return `coalesce(${value}, 'null')`;
  })
  .join(', ')})`;

/**
 * What a span's `members` text holds: its JSON fields (without braces); the same with every `"` doubled (for a CSV
 * cell, which renderChildren then writes whole); its CSV record (CSV_RECORD); or its values (VALUES).
 */
export type SpanTextForm = 'json' | 'json-in-csv' | 'csv' | 'values';

function membersOf(dialect: TreeDialect, form: SpanTextForm): string {
  if (form === 'csv') return CSV_RECORD;
  if (form === 'values') return VALUES;
  return MEMBERS[form][dialect.omitNulls ? 'withoutNulls' : 'withNulls'];
}

function textColumns(dialect: TreeDialect, form: SpanTextForm = 'json', rootsEmpty = false): string {
  const members = membersOf(dialect, form);
  return `s.trace_id, s.parent_trace_id, s.execution_order, ${wireTimestamp(START)} as start_timestamp,
  array_to_json(s.children_ids)::text as children_ids,
  ${rootsEmpty ? `case when s.trace_id = s.root_trace_id then '' else ${members} end` : members} as members`;
}

/** Raw rows of textColumns as columns; the members stay the bytes PostgreSQL sent. */
function toSpanTexts(rows: (Buffer | null)[][], dialect: TreeDialect, form: SpanTextForm = 'json'): SpanTexts {
  const n = rows.length;
  const spans: SpanTexts = {
    dialect,
    quotesDoubled: form === 'json-in-csv',
    trace_id: new Array(n),
    parent_trace_id: new Array(n),
    execution_order: new Array(n),
    start_timestamp: new Array(n),
    children_ids: new Array(n),
    members: new Array(n),
  };
  rows.forEach(([id, parent, order, start, declared, members], i) => {
    spans.trace_id[i] = id!.toString('latin1');
    spans.parent_trace_id[i] = parent!.toString('latin1');
    spans.execution_order[i] = order && Number(order.toString('latin1'));
    spans.start_timestamp[i] = start && start.toString('latin1');
    spans.children_ids[i] = declared && (JSON.parse(declared.toString('utf8')) as string[]);
    spans.members[i] = members!;
  });
  return spans;
}

const rootsQuery = (sql: Sql, organizationId: string, rootIds: readonly string[], columns: string) => sql`
  select ${sql.unsafe(columns)}
  from ${spansByKey(sql, organizationId, rootIds, 'root_trace_id')} left join projects p on p.id = s.project_id`;

// Serializing is most of the cost of reading a large trace, and one backend does it on one core: a large
// trace is read in parts, in parallel, each part the spans whose id hashes to it.
const SPANS_PER_PART = 4000,
  MAX_PARTS = 4;

/**
 * Every visible span of the trace that holds `traceId`, serialized for renderTrees in the dialect it will be
 * rendered in; null when the span is unknown to this organization.
 */
export async function findTraceTextOf(
  sql: Sql,
  organizationId: string,
  traceId: string,
  dialect: TreeDialect = API_TREES,
): Promise<SpanTexts | null> {
  // The size only sets the number of parts (counting a 10,000-span trace takes about 8 ms).
  // Every span of the trace is in the partition of the one asked for (span-writes.ts places them there).
  const part = await partOfSpan(sql, organizationId, traceId);
  if (part === null) return null;
  const [trace] = await sql<{ root: string; size: number }[]>`
    select t.root_trace_id as root,
      (select count(*)::int from spans c where c.organization_id = t.organization_id and c.root_trace_id = t.root_trace_id
        and c.part_at = ${part}::timestamptz) as size
    from spans t
    where t.organization_id = ${organizationId} and t.trace_id = ${traceId} and t.created and t.part_at = ${part}::timestamptz`;
  if (!trace) return null;
  const parts = Math.min(MAX_PARTS, Math.ceil(trace.size / SPANS_PER_PART));
  const read = (n: number) =>
    sql`
    select ${sql.unsafe(textColumns(dialect))}
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.root_trace_id = ${trace.root}
      and s.part_at = ${part}::timestamptz and s.created
      ${parts > 1 ? sql`and (uuid_hash(s.trace_id) & 2147483647) % ${parts} = ${n}` : sql``}`.raw();
  const rows = await Promise.all(Array.from({ length: parts }, (_, n) => read(n)));
  return toSpanTexts(rows.flat() as never, dialect);
}

/** The visible spans of the traces under `rootIds`, serialized for renderTrees in the dialect they will be rendered in. */
export async function spanTextsOfRoots(
  sql: Sql,
  organizationId: string,
  rootIds: readonly string[],
  dialect: TreeDialect = API_TREES,
  form: SpanTextForm = 'json',
): Promise<SpanTexts> {
  return toSpanTexts(
    rootIds.length ? ((await rootsQuery(sql, organizationId, rootIds, textColumns(dialect, form)).raw()) as never) : [],
    dialect,
    form,
  );
}

/**
 * The visible spans of the traces under `rootIds` as spanTextsOfRoots reads them, with each root's record in `records`'
 * form (its CSV record, or its values) by its id. One read: each record meets its own children, and the roots are not
 * looked up a second time. A root's own members are left empty: its record stands for it, and renderChildren writes
 * only the spans under it (building and doubling the roots' JSON was a tenth of PostgreSQL's work for such a batch).
 */
export async function spanTextsWithRecords(
  sql: Sql,
  organizationId: string,
  rootIds: readonly string[],
  dialect: TreeDialect,
  form: SpanTextForm,
  records: 'csv' | 'values',
): Promise<{ spans: SpanTexts; records: Map<string, Buffer> }> {
  const columns = `${textColumns(dialect, form, true)},
    case when s.trace_id = s.root_trace_id then ${records === 'csv' ? CSV_RECORD : VALUES} end as record`;
  const rows = rootIds.length
    ? ((await rootsQuery(sql, organizationId, rootIds, columns).raw()) as unknown as (Buffer | null)[][])
    : [];
  const byRoot = new Map<string, Buffer>();
  // The record is the column after textColumns' six.
  for (const row of rows) if (row[6]) byRoot.set(row[0]!.toString('latin1'), row[6]);
  return { spans: toSpanTexts(rows, dialect, form), records: byRoot };
}

/**
 * The partition key of one span, from the key table, as text (microseconds kept); null when the organization
 * has no such span. A trace's reads take it first and name it as a value: PostgreSQL then plans the one
 * partition. Named by a subquery, the partition is only chosen as the query runs, so every partition is
 * planned, and each correlated subquery once for each: over a month of days, 40 × 40 plans, 50 ms of
 * planning for a trace's log that ran in 10.
 */
export async function partOfSpan(sql: Sql, organizationId: string, traceId: string): Promise<string | null> {
  const [row] = await sql<{ part: string }[]>`
    select k.part_at::text as part from span_parts k where k.organization_id = ${organizationId} and k.trace_id = ${traceId}`;
  return row?.part ?? null;
}

/**
 * SQL: a relation `s` of the organization's created spans whose `key` (their own id, or their root's) is
 * among `ids`, `r.n` the id's place in `ids`. Each id is read in its own partition, found in the key table
 * (a trace lives in one): by the ids alone every day's index is probed for each, and a batch of 100 roots
 * over a month of day partitions read 9,800 buffers and took 30 ms to plan and run, against 1,200 and 4 ms.
 * OFFSET 0 keeps the planner from flattening the lookup into one join over every partition.
 */
export const spansByKey = (
  sql: Sql,
  organizationId: string,
  ids: readonly string[],
  key: 'trace_id' | 'root_trace_id',
) => sql`
  unnest(${sql.array(ids as string[])}::uuid[]) with ordinality as r(id, n)
  cross join lateral (
    select * from spans s
    where s.organization_id = ${organizationId} and s.${sql.unsafe(key)} = r.id and s.created
      and s.part_at = (select k.part_at from span_parts k where k.organization_id = ${organizationId} and k.trace_id = r.id)
    offset 0) s`;

/** One span's JSON in api.md's shape, without its children; null when the organization has no such span. */
export async function findSpanText(sql: Sql, organizationId: string, traceId: string): Promise<string | null> {
  const part = await partOfSpan(sql, organizationId, traceId);
  if (part === null) return null;
  const [row] = await sql<{ span: string }[]>`
    select ${sql.unsafe(SPAN_JSON_SQL)} as span
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.trace_id = ${traceId} and s.created
      and s.part_at = ${part}::timestamptz`;
  return row?.span ?? null;
}
