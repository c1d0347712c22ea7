import { createHash } from 'node:crypto';
import {
  API_TREES,
  compileFilter,
  deriveFields,
  foldEvents,
  unitHash,
  type FilterInput,
  type SpanState,
  type SpanTexts,
  type TreeDialect,
  type Versions,
} from '@sightline/core';
import { SpanEventFields, type SpanEvent, type TimeRange, type TraceSort } from '@sightline/schemas';
import { transaction, type Sql } from './client';
import { markExperimentsRunning } from './experiments';
import { ensureSpanPartitions } from './partitions';
import { searchConditions, searchWordsOf, type SearchPlan } from './search';
import { startsSince } from './trace-start';

// Wire field name -> column, where they differ.
const COLUMN_OF: Record<string, string> = { start_timestamp: 'start_ts', end_timestamp: 'end_ts' };
const TIMESTAMPS = new Set(['start_timestamp', 'end_timestamp']);
const FIELDS = Object.keys(SpanEventFields.shape);
const columnOf = (field: string) => COLUMN_OF[field] ?? field;
const WRITE_COLUMNS = [
  'organization_id',
  'trace_id',
  'part_at',
  'created',
  'versions',
  'search_words',
  ...FIELDS.map(columnOf),
];

// Rows travel to PostgreSQL as one JSON document per statement, unpacked by jsonb_populate_recordset into
// the columns' types: native JSON.stringify and PostgreSQL's JSON parser cost a fraction of binding
// forty parameters a row, which was the worker's main CPU cost per span. As jsonb, the document is parsed
// once; as json, each jsonb column's value was parsed again (about 15 % more PostgreSQL CPU per span).
const UPSERT = `
  insert into spans (${WRITE_COLUMNS.join(', ')})
  select ${WRITE_COLUMNS.join(', ')} from jsonb_populate_recordset(null::spans, $1::text::jsonb)
  on conflict (organization_id, trace_id, part_at) do update set
    ${WRITE_COLUMNS.slice(3)
      .map((c) => `${c} = excluded.${c}`)
      .join(', ')},
    updated_at = now()`;

// PostgreSQL's check_violation, as it reports a row that no partition takes.
const NO_PARTITION = '23514';

/** JSON text of the rows. Lone surrogates become U+FFFD, as when text is sent as UTF-8; PostgreSQL refuses them in JSON. */
function rowsJson(rows: Record<string, unknown>[]): string {
  const json = JSON.stringify(rows);
  return /\\u[dD][89abAB]/.test(json)
    ? JSON.stringify(rows, (_key, value) => (typeof value === 'string' ? value.toWellFormed() : value))
    : json;
}

/**
 * Transaction-scoped advisory locks, taken in sorted order so that concurrent workers cannot deadlock.
 * Every transaction takes all its span locks before any trace-root lock, and never the other way round.
 */
async function takeLocks(tx: Sql, names: string[]): Promise<void> {
  const keys = [...new Set(names.map((n) => createHash('sha1').update(n).digest().readBigInt64BE(0)))];
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await tx`select pg_advisory_xact_lock(k) from unnest(${tx.array(keys.map(String))}::bigint[]) with ordinality as l(k, i) order by i`;
}

export type EvalTrigger = { organization_id: string; trace_id: string; metric_names: string[]; seq: number };

// Events that change what an evaluation sees; feedback or a tag change does not re-run the evaluations.
const EVALUATED_FIELDS = ['output', 'output_for_eval_metrics', 'end_timestamp', 'evaluation_metric_names', 'target'];

/**
 * The spans of this batch whose evaluations must (re)run: they name metrics, have ended (an output or an
 * end time), are sampled in by apply_eval_frac (per trace id, so retries decide alike), and this batch
 * created them or changed what is evaluated.
 */
function evalTriggers(
  key: { organization_id: string; trace_id: string },
  list: readonly SpanEvent[],
  created: boolean,
  fields: Record<string, unknown>,
): EvalTrigger | null {
  const names = fields.evaluation_metric_names as string[] | null | undefined;
  if (!created || !names?.length || (fields.output == null && fields.end_timestamp == null)) return null;
  if (!list.some((e) => e.kind === 'create' || EVALUATED_FIELDS.some((f) => f in e.fields))) return null;
  const fraction = (fields.apply_eval_frac as number | null | undefined) ?? 1;
  if (fraction < 1 && !(fraction > 0 && unitHash(`eval:${key.trace_id}`) < fraction)) return null;
  return { ...key, metric_names: [...new Set(names)], seq: Math.max(...list.map((e) => e.seq)) };
}

/** A trace, by its root id, and its partition (`part_at` as PostgreSQL's text, microseconds kept). */
type TraceRoot = { org: string; root: string; part: string };
type StoredRow = Record<string, unknown>;
/** A span's partition when it has one, and its stored row when it has one (a trace's root may have only the first). */
type Stored = { part: string; row?: StoredRow };

/** The events of each span, by `organization/trace id`, in the order they came. */
function groupBySpan(events: readonly SpanEvent[]): Map<string, SpanEvent[]> {
  const byKey = new Map<string, SpanEvent[]>();
  for (const e of events) {
    const key = `${e.organization_id}/${e.trace_id}`;
    const list = byKey.get(key);
    if (list) list.push(e);
    else byKey.set(key, [e]);
  }
  return byKey;
}

/**
 * Locks the spans of `byKey` and reads their partitions and stored rows, by `organization/trace id`. The
 * key table says which partition each span is in; the rows are then read a partition at a time, each
 * statement pruned to its partition once (a join on the keys prunes again for every row). A batch of new
 * spans has no keys, and reads no rows.
 */
async function lockAndReadSpans(tx: Sql, byKey: Map<string, SpanEvent[]>): Promise<Map<string, Stored>> {
  const keys = [...byKey.values()].map(([e]) => ({ org: e.organization_id, id: e.trace_id }));
  await takeLocks(
    tx,
    keys.map((k) => `span/${k.org}/${k.id}`),
  );
  const found = await tx<{ org: string; id: string; part: string }[]>`
    select k.organization_id as org, k.trace_id as id, k.part_at::text as part
    from ${idList(tx, keys)} join span_parts k on k.organization_id = q.org and k.trace_id = q.id`;
  const stored = new Map<string, Stored>(found.map((k) => [`${k.org}/${k.id}`, { part: k.part }]));
  for (const part of new Set(found.map((k) => k.part))) {
    const inPart = found.filter((k) => k.part === part);
    const rows = await tx`
      select s.organization_id, s.trace_id, s.created, s.versions, s.depth as stored_depth, s.execution_order as stored_order,
             ${tx.unsafe(FIELDS.map(selectField).join(', '))}
      from ${idList(tx, inPart)} join spans s on s.organization_id = q.org and s.trace_id = q.id
      where s.part_at = ${part}::timestamptz`;
    for (const row of rows) stored.get(`${row.organization_id}/${row.trace_id}`)!.row = row;
  }
  return stored;
}

/** SQL: spans by id, as a relation `q(org, id)`. */
const idList = (sql: Sql, ids: { org: string; id: string }[]) => sql`
  unnest(${sql.array(ids.map((k) => k.org))}::uuid[], ${sql.array(ids.map((k) => k.id))}::uuid[]) as q(org, id)`;

/**
 * The partition of each trace, by `organization/root id`: the one its first stored span went to, or now's
 * for a trace new to the store (its root's key is made here, before any of its spans, so that they all
 * follow it). The caller holds the traces' locks, so the key read back is the one every writer sees.
 */
async function tracePartitions(tx: Sql, roots: { org: string; root: string }[]): Promise<Map<string, string>> {
  if (!roots.length) return new Map();
  const ids = roots.map((r) => ({ org: r.org, id: r.root }));
  const rows = await tx<{ org: string; id: string; part: string }[]>`
    with t as (select distinct * from ${idList(tx, ids)}),
    made as (
      insert into span_parts (organization_id, trace_id, part_at) select org, id, now() from t
      on conflict do nothing
      returning organization_id, trace_id, part_at
    )
    select t.org, t.id, coalesce(m.part_at, k.part_at)::text as part
    from t
    left join made m on m.organization_id = t.org and m.trace_id = t.id
    left join span_parts k on k.organization_id = t.org and k.trace_id = t.id`;
  return new Map(rows.map((r) => [`${r.org}/${r.id}`, r.part]));
}

/** One span's events folded into its stored state (`before`): its derived fields and the row to write. */
function foldSpan(list: readonly SpanEvent[], before: StoredRow | undefined) {
  const [{ organization_id, trace_id }] = list;
  const state = foldEvents(
    before && rowToState(before),
    [...list].sort((a, b) => a.seq - b.seq),
  );
  const fields = deriveFields(trace_id, state.fields);
  // Depth and order the tree decided earlier (or the API saw, the latest event's) stay until the tree is
  // recomputed. A row stored only by updates has no place in the tree yet: its parent was unknown.
  const seen = list.findLast((e) => e.tree)?.tree;
  const placed = before?.created ? before : undefined;
  fields.depth ??= seen?.depth ?? placed?.stored_depth ?? null;
  fields.execution_order ??= seen?.execution_order ?? placed?.stored_order ?? null;
  const row: Record<string, unknown> = {
    organization_id,
    trace_id,
    created: state.created,
    versions: state.versions,
    // Only created spans are searched (and indexed).
    search_words: state.created ? searchWordsOf(fields) : null,
  };
  for (const field of FIELDS) row[columnOf(field)] = fields[field] ?? null;
  return { created: state.created, fields, row };
}

/** Marks running the experiments that spans created by this batch belong to. */
async function markCreatedExperimentsRunning(tx: Sql, rows: Record<string, unknown>[]): Promise<void> {
  const experiments = rows
    .filter((r) => r.created && r.experiment_uuid)
    .map((r) => ({ org: r.organization_id as string, experiment: r.experiment_uuid as string }));
  await markExperimentsRunning(tx, [...new Map(experiments.map((e) => [`${e.org}/${e.experiment}`, e])).values()]);
}

/** Recomputes depth and execution order in the traces under `roots` that hold a span still waiting for them. */
async function orderWaitingSpans(tx: Sql, roots: TraceRoot[]): Promise<void> {
  const unordered = await tx<TraceRoot[]>`
    select distinct s.organization_id as org, s.root_trace_id as root, r.part
    from ${traceRoots(tx, roots)}
    join spans s on s.organization_id = r.org and s.root_trace_id = r.root and s.part_at = r.part::timestamptz
    where s.created and (s.depth is null or s.execution_order is null)`;
  if (unordered.length) await recomputeTreeOrder(tx, unordered);
}

/** SQL: `roots` as a relation `r(org, root, part)`. */
const traceRoots = (sql: Sql, roots: TraceRoot[]) => sql`
  unnest(${sql.array(roots.map((r) => r.org))}::uuid[], ${sql.array(roots.map((r) => r.root))}::uuid[],
         ${sql.array(roots.map((r) => r.part))}::text[]) as r(org, root, part)`;

/**
 * OpenTelemetry spans name their parent by span id, so a child of a trace's root names the root by its
 * span-id form (`otelIds.span` of @sightline/otel), while the root is stored under the trace id (so that
 * every span knows its root before the root arrives). The API points such children at the root when the
 * root came in the same request; this does it across requests, whichever of the two came first. The root
 * keeps its span id in `metadata->>'otel.span_id'`; the span-id form of a UUID is the trace id's first 8
 * bytes (the UUID text's first 18 characters) and then the span id's 8. Runs under the traces' locks.
 */
async function reattachOtelChildren(tx: Sql, events: readonly SpanEvent[]): Promise<void> {
  const roots: { org: string; root: string; alias: string }[] = [];
  const children: { org: string; id: string }[] = [];
  // The API says which events are roots (with their span-id form) and which children's parent was not in
  // their request: only those can be a root's children that it could not point at the root.
  for (const e of events) {
    if (e.kind !== 'create' || !e.otel) continue;
    if (e.otel.root_alias) roots.push({ org: e.organization_id, root: e.trace_id, alias: e.otel.root_alias });
    else if (e.otel.parent_elsewhere) children.push({ org: e.organization_id, id: e.trace_id });
  }
  // Children stored before their root arrived: found by their parent (spans_by_parent).
  if (roots.length)
    await tx`
      update spans c set parent_trace_id = k.root
      from unnest(${tx.array(roots.map((r) => r.org))}::uuid[], ${tx.array(roots.map((r) => r.root))}::uuid[],
                  ${tx.array(roots.map((r) => r.alias))}::uuid[]) as k(org, root, alias)
      where c.organization_id = k.org and c.parent_trace_id = k.alias and c.root_trace_id = k.root`;
  // Children arriving after their root: each looked up with its root by key.
  if (children.length)
    await tx`
      update spans c set parent_trace_id = r.trace_id
      from unnest(${tx.array(children.map((c) => c.org))}::uuid[], ${tx.array(children.map((c) => c.id))}::uuid[]) as k(org, id),
           spans r
      where c.organization_id = k.org and c.trace_id = k.id
        and r.organization_id = c.organization_id and r.trace_id = c.root_trace_id
        and r.metadata ->> 'otel.span_id' ~ '^[0-9a-f]{16}$'
        and c.parent_trace_id::text = left(r.trace_id::text, 18) || '-' || left(r.metadata ->> 'otel.span_id', 4)
          || '-' || substr(r.metadata ->> 'otel.span_id', 5)`;
}

/**
 * Applies span events in one transaction: locks the touched spans, folds the events into their stored
 * state, and writes every row back in multi-row upserts. Where the tree decides a span's depth or
 * execution order (the client sent none), the touched traces are locked and recomputed.
 * Answers the spans whose evaluations must now run.
 */
export async function applySpanEvents(sql: Sql, events: readonly SpanEvent[]): Promise<EvalTrigger[]> {
  try {
    return await applyEvents(sql, events);
  } catch (err) {
    // Today's partition is missing (the service was down for longer than the days made ahead): make it.
    if ((err as { code?: string }).code !== NO_PARTITION) throw err;
    await ensureSpanPartitions(sql);
    return applyEvents(sql, events);
  }
}

async function applyEvents(sql: Sql, events: readonly SpanEvent[]): Promise<EvalTrigger[]> {
  const byKey = groupBySpan(events);
  const triggers: EvalTrigger[] = [];
  await transaction(sql, async (tx) => {
    const stored = await lockAndReadSpans(tx, byKey);
    const spans = [...byKey.entries()].map(([key, list]) => {
      const before = stored.get(key);
      const folded = foldSpan(list, before?.row);
      const [{ organization_id, trace_id }] = list;
      const trigger = evalTriggers({ organization_id, trace_id }, list, folded.created, folded.fields);
      if (trigger) triggers.push(trigger);
      const root = { org: list[0].organization_id, root: folded.fields.root_trace_id as string };
      // A span goes to its trace's partition: a new one, and one stored by updates alone that is created now
      // (it was stored under itself as root, not knowing its trace).
      const placed = before && !(before.row && !before.row.created && folded.created) ? before.part : undefined;
      return { ...folded, before, root, placed };
    });

    // Writers of one trace are serialized by its lock, taken before any row is written (so nobody waits
    // for it while holding row locks another writer needs). Whoever writes last then sees every span of
    // the trace committed, and orders the spans still waiting for their place in the tree. The lock also
    // makes the trace's partition key once.
    const locked = new Map(
      spans.filter((s) => s.created || !s.placed).map((s) => [`${s.root.org}/${s.root.root}`, s.root]),
    );
    if (locked.size)
      await takeLocks(
        tx,
        [...locked.values()].map((r) => `root/${r.org}/${r.root}`),
      );
    const traceParts = await tracePartitions(
      tx,
      spans.filter((s) => !s.placed).map((s) => s.root),
    );
    const moved: { org: string; id: string; from: string; to: string }[] = [];
    const traces = new Map<string, TraceRoot>();
    for (const span of spans) {
      const part = span.placed ?? traceParts.get(`${span.root.org}/${span.root.root}`)!;
      if (span.before && span.before.part !== part) {
        moved.push({ org: span.root.org, id: span.row.trace_id as string, from: span.before.part, to: part });
      }
      span.row.part_at = part;
      if (span.created) traces.set(`${span.root.org}/${span.root.root}`, { ...span.root, part });
    }
    if (moved.length) await moveSpans(tx, moved);
    const rows = spans.map((s) => s.row);
    await tx.unsafe(UPSERT, [rowsJson(rows)], { prepare: true });
    await markCreatedExperimentsRunning(tx, rows);
    await reattachOtelChildren(tx, events);
    if (traces.size) await orderWaitingSpans(tx, [...traces.values()]);
  });
  return triggers;
}

/** Spans stored by updates alone, now created in another trace's partition: their rows go, the upsert writes them anew. */
async function moveSpans(tx: Sql, moved: { org: string; id: string; from: string; to: string }[]): Promise<void> {
  const list = tx`unnest(${tx.array(moved.map((m) => m.org))}::uuid[], ${tx.array(moved.map((m) => m.id))}::uuid[],
    ${tx.array(moved.map((m) => m.from))}::text[], ${tx.array(moved.map((m) => m.to))}::text[]) as m(org, id, from_part, to_part)`;
  await tx`delete from spans s using ${list}
    where s.organization_id = m.org and s.trace_id = m.id and s.part_at = m.from_part::timestamptz`;
  await tx`update span_parts k set part_at = m.to_part::timestamptz from ${list}
    where k.organization_id = m.org and k.trace_id = m.id`;
}

function selectField(field: string): string {
  const column = columnOf(field);
  // Timestamps round-trip as text to keep microseconds (a JS Date keeps milliseconds).
  return TIMESTAMPS.has(field) ? `s.${column}::text as ${field}` : `s.${column} as ${field}`;
}

function rowToState(row: Record<string, unknown>): SpanState {
  const stored = row.versions as Partial<Versions>;
  const versions = { create: stored.create ?? {}, update: stored.update ?? {} };
  const fields: Record<string, unknown> = {};
  for (const field of [...Object.keys(versions.create), ...Object.keys(versions.update)]) fields[field] = row[field];
  return { created: row.created as boolean, versions, fields };
}

/** Depth and execution order the client did not send follow from the tree: the root is 0, +1 per level / span. */
async function recomputeTreeOrder(sql: Sql, unique: TraceRoot[]): Promise<void> {
  await sql`
    with recursive tree as (
      select s.organization_id, s.trace_id, s.part_at, 0 as depth
      from ${traceRoots(sql, unique)}
      join spans s on s.organization_id = r.org and s.trace_id = r.root and s.part_at = r.part::timestamptz
      where s.created and s.parent_trace_id = s.trace_id
      union all
      select c.organization_id, c.trace_id, c.part_at, tree.depth + 1
      from tree
      join spans c on c.organization_id = tree.organization_id and c.parent_trace_id = tree.trace_id and c.part_at = tree.part_at
      where c.created and c.trace_id <> c.parent_trace_id and tree.depth < 100000
    ),
    ordered as (
      select s.organization_id, s.trace_id, s.part_at, tree.depth,
        (row_number() over (partition by s.organization_id, s.root_trace_id
                            order by tree.depth = 0 desc, s.start_ts nulls last, tree.depth, s.created_at, s.trace_id) - 1)::int
          as execution_order
      from tree join spans s on s.organization_id = tree.organization_id and s.trace_id = tree.trace_id and s.part_at = tree.part_at
    )
    update spans s set
      depth = case when ${sql.unsafe(explicit('depth'))} then s.depth else o.depth end,
      execution_order = case when ${sql.unsafe(explicit('execution_order'))} then s.execution_order else o.execution_order end
    from ordered o
    where s.organization_id = o.organization_id and s.trace_id = o.trace_id and s.part_at = o.part_at
      and ((not ${sql.unsafe(explicit('depth'))} and s.depth is distinct from o.depth)
        or (not ${sql.unsafe(explicit('execution_order'))} and s.execution_order is distinct from o.execution_order))`;
}

/** SQL: the client (not the tree) set this field of span `s`. */
function explicit(field: 'depth' | 'execution_order'): string {
  return `(s.versions -> 'create' ? '${field}' or s.versions -> 'update' ? '${field}')`;
}

// ---- Reading -------------------------------------------------------------------------------------------

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
 * through to_json.
 */
function jsonValue({ sql: e, type }: ReadColumn): string {
  switch (type) {
    case 'jsonb':
      return `${e}::text`;
    case 'timestamp':
      return `'"' || ${wireTimestamp(e)} || '"'`;
    case 'uuid':
      return `'"' || ${e} || '"'`;
    case 'float':
      return `(case when ${e} in ('NaN', 'Infinity', '-Infinity') then null else ${e} end)::text`;
    case 'integer':
    case 'boolean':
      return `${e}::text`;
    case 'text[]':
      return `array_to_json(${e})::text`;
    default:
      return `to_json(${e})::text`;
  }
}
// Spans serialized by PostgreSQL as it reads them: `members` is a span's JSON without its braces. This costs
// PostgreSQL less than sending the columns costs Node to parse; Node only nests the spans, and the bytes go
// from the socket to the answer without becoming strings. concat_ws() takes each piece once (a chain of ||
// would copy the growing text at every step) and skips the null ones: a field without a value is written
// as null, or left out in a dialect that omits nulls.
const membersSql = (omitNulls: boolean) =>
  `concat_ws(',', ${READ.filter((c) => c.type !== 'declared')
    .map((c) => `'"${c.name}":' || ${omitNulls ? jsonValue(c) : `coalesce(${jsonValue(c)}, 'null')`}`)
    .join(', ')})`;
const MEMBERS = { withNulls: membersSql(false), withoutNulls: membersSql(true) };
const textColumns = (
  dialect: TreeDialect,
) => `s.trace_id, s.parent_trace_id, s.execution_order, ${wireTimestamp(START)} as start_timestamp,
  array_to_json(s.children_ids)::text as children_ids,
  ${dialect.omitNulls ? MEMBERS.withoutNulls : MEMBERS.withNulls} as members`;

/** Raw rows of TEXT_COLUMNS as columns; the members stay the bytes PostgreSQL sent. */
function toSpanTexts(rows: (Buffer | null)[][], dialect: TreeDialect): SpanTexts {
  const n = rows.length;
  const spans: SpanTexts = {
    dialect,
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
  from spans s left join projects p on p.id = s.project_id
  where s.organization_id = ${organizationId} and s.root_trace_id = any(${sql.array(rootIds as string[])}::uuid[]) and s.created`;

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
  // The size only sets the number of parts: it counts the trace's index entries, without reading the rows.
  const [trace] = await sql<{ root: string; size: number }[]>`
    select t.root_trace_id as root, (select count(*)::int from spans where organization_id = t.organization_id and root_trace_id = t.root_trace_id) as size
    from spans t
    where t.organization_id = ${organizationId} and t.trace_id = ${traceId} and t.created
      and t.part_at = ${partOf(sql, organizationId, traceId)}`;
  if (!trace) return null;
  const parts = Math.min(MAX_PARTS, Math.ceil(trace.size / SPANS_PER_PART));
  const read = (part: number) =>
    sql`
    select ${sql.unsafe(textColumns(dialect))}
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.root_trace_id = ${trace.root} and s.created
      ${parts > 1 ? sql`and (uuid_hash(s.trace_id) & 2147483647) % ${parts} = ${part}` : sql``}`.raw();
  const rows = await Promise.all(Array.from({ length: parts }, (_, part) => read(part)));
  return toSpanTexts(rows.flat() as never, dialect);
}

/** The visible spans of the traces under `rootIds`, serialized for renderTrees in the dialect they will be rendered in. */
export async function spanTextsOfRoots(
  sql: Sql,
  organizationId: string,
  rootIds: readonly string[],
  dialect: TreeDialect = API_TREES,
): Promise<SpanTexts> {
  return toSpanTexts(
    rootIds.length ? ((await rootsQuery(sql, organizationId, rootIds, textColumns(dialect)).raw()) as never) : [],
    dialect,
  );
}

const TIME_RANGE_INTERVAL: Record<TimeRange, string | null> = {
  na: null,
  '1h': '1 hour',
  '3h': '3 hours',
  '6h': '6 hours',
  '24h': '24 hours',
  '7d': '7 days',
  '1m': '1 month',
  '3m': '3 months',
  '6m': '6 months',
  '1y': '1 year',
};

// Each order is the order (or the backward order) of an index of the project's roots.
const ORDER_BY: Record<TraceSort, string> = {
  newest: 'order by s.start_ts desc nulls last, s.trace_id desc',
  oldest: 'order by s.start_ts asc nulls first, s.trace_id asc',
  slowest: 'order by s.latency desc nulls last, s.trace_id desc',
};

export type RootQuery = {
  organizationId: string;
  projectId: string | null;
  experimentUuid?: string;
  filter?: FilterInput;
  timeRange?: TimeRange;
  status?: string | null;
  /** Words and "phrases" one span of the trace holds (ignoring case), and -words none holds. */
  search?: string | null;
  /** How to search (searchPlanOf); by the index when not given. */
  searchPlan?: SearchPlan;
  /** Newest first unless given. */
  sort?: TraceSort;
  page: number;
  pageSize: number;
};

/** The listing's SQL: root spans, newest first. Throws FilterError for a bad filter. */
export function rootListingSql(q: RootQuery): { count: string; matching: string; page: string; params: unknown[] } {
  const params: unknown[] = [q.organizationId, q.projectId];
  // No "$2 is null or ..." disjunction: it would keep the planner from using the project's index.
  const conditions = [
    's.organization_id = $1',
    's.created',
    's.depth = 0',
    q.projectId ? 's.project_id = $2::uuid' : '$2::uuid is null',
  ];
  if (q.experimentUuid) conditions.push(`s.experiment_uuid = $${params.push(q.experimentUuid)}::uuid`);
  const filter = q.filter && compileFilter(q.filter, params.length + 1);
  if (filter) {
    conditions.push(filter.text);
    params.push(...filter.params);
  }
  const interval = q.timeRange && TIME_RANGE_INTERVAL[q.timeRange];
  if (interval) conditions.push(startsSince('s', `now() - $${params.push(interval)}::interval`));
  if (q.status) conditions.push(`s.status = $${params.push(q.status)}::text`);
  const order = ORDER_BY[q.sort ?? 'newest'];
  const plan = q.searchPlan ?? { by: 'index' };
  const searching = q.search ? searchConditions(q.search, plan, (v) => `$${params.push(v)}`) : [];
  const where = [...conditions, ...searching].join(' and ');
  // The page's two parameters come last: countRoots leaves them out.
  const page = `limit $${params.push(q.pageSize)} offset $${params.push((q.page - 1) * q.pageSize)}`;
  const count = `select count(*)::int as total from spans s where ${where}`;
  const matching = `select from spans s where ${where}`;
  if (plan.by === 'walk' && searching.length) {
    // The first `roots` roots in the listing's order that pass the other conditions, each tested in turn.
    const roots = `select s.trace_id, s.start_ts, s.latency from spans s where ${conditions.join(' and ')} ${order} limit ${plan.roots}`;
    return {
      count,
      matching,
      page: `select s.trace_id from (${roots}) s where ${searching.join(' and ')} ${order} ${page}`,
      params,
    };
  }
  return { count, matching, page: `select s.trace_id from spans s where ${where} ${order} ${page}`, params };
}

/** One page of root span ids, without the total. */
export async function rootIds(sql: Sql, q: RootQuery): Promise<string[]> {
  const { page, params } = rootListingSql(q);
  return (await sql.unsafe(page, params as never[])).map((r) => r.trace_id as string);
}

/** The exact number of roots the listing matches, or `upTo` when there are more. */
export async function countRoots(sql: Sql, q: RootQuery, upTo?: number): Promise<number> {
  const { count, matching, params } = rootListingSql(q);
  const text = upTo ? `select count(*)::int as total from (${matching} limit ${upTo}) s` : count;
  const [{ total }] = await sql.unsafe(text, params.slice(0, -2) as never[]);
  return total as number;
}

/**
 * SQL: the partition key of one span, from the key table. As a subquery (evaluated once, before the
 * partitions are read) it leaves PostgreSQL one partition to read; as a join on constants it read them all.
 */
const partOf = (sql: Sql, organizationId: string, traceId: string) =>
  sql`(select k.part_at from span_parts k where k.organization_id = ${organizationId} and k.trace_id = ${traceId})`;

/** One span's JSON in api.md's shape, without its children; null when the organization has no such span. */
export async function findSpanText(sql: Sql, organizationId: string, traceId: string): Promise<string | null> {
  const [row] = await sql<{ span: string }[]>`
    select '{' || ${sql.unsafe(MEMBERS.withNulls)} || '}' as span
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.trace_id = ${traceId} and s.created
      and s.part_at = ${partOf(sql, organizationId, traceId)}`;
  return row?.span ?? null;
}
