// The span write path: a batch of span events locked, folded into the stored rows, placed in their trace's
// partition and upserted in one transaction. The reads (span-json.ts, root-listing.ts) share none of it.
import { createHash } from 'node:crypto';
import { deriveFields, foldEvents, type SpanState, type Versions } from '@sightline/core';
import { estimateSpanUsage } from '@sightline/llm/usage-estimate';
import { SpanEventFields, type SpanEvent } from '@sightline/schemas';
import { transaction, type Sql } from './client';
import { evalTriggers, type EvalTrigger } from './eval-triggers';
import { markExperimentsRunning } from './experiments';
import { ensureSpanPartitions } from './partitions';
import { searchWordsOf } from './search';
import { orderWaitingSpans, reattachOtelChildren, type TraceRoot } from './span-tree';
import { setBatchTraceTotals, storeTraceTotals, TRACE_TOTAL_COLUMNS } from './trace-total';

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
// A root's totals are written by an insert only (setBatchTraceTotals); an update leaves them to storeTraceTotals.
const INSERT_COLUMNS = [...WRITE_COLUMNS, ...TRACE_TOTAL_COLUMNS];
const UPSERT = `
  insert into spans (${INSERT_COLUMNS.join(', ')})
  select ${INSERT_COLUMNS.join(', ')} from jsonb_populate_recordset(null::spans, $1::text::jsonb)
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
export async function takeLocks(tx: Sql, names: string[]): Promise<void> {
  const keys = [...new Set(names.map((n) => createHash('sha1').update(n).digest().readBigInt64BE(0)))];
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  await tx`select pg_advisory_xact_lock(k) from unnest(${tx.array(keys.map(String))}::bigint[]) with ordinality as l(k, i) order by i`;
}

type StoredRow = Record<string, unknown>;
/** A span's partition when it has one, and its stored row when it has one (a trace's root may have only the first). */
type Stored = { part: string; row?: StoredRow };

/** The events of each span, by `organization/trace id`, in the order they came. */
export function groupBySpan(events: readonly SpanEvent[]): Map<string, SpanEvent[]> {
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
export const idList = (sql: Sql, ids: { org: string; id: string }[]) => sql`
  unnest(${sql.array(ids.map((k) => k.org))}::uuid[], ${sql.array(ids.map((k) => k.id))}::uuid[]) as q(org, id)`;

/**
 * The partition of each trace, by `organization/root id`: the one its first stored span went to, or now's
 * for a trace new to the store (its root's key is made here, before any of its spans, so that they all
 * follow it), and which traces are new. The caller holds the traces' locks, so the key read back is the one
 * every writer sees, and a new trace's spans are all in the caller's batch.
 */
async function tracePartitions(
  tx: Sql,
  roots: { org: string; root: string }[],
): Promise<{ parts: Map<string, string>; made: Set<string> }> {
  if (!roots.length) return { parts: new Map(), made: new Set() };
  const ids = roots.map((r) => ({ org: r.org, id: r.root }));
  const rows = await tx<{ org: string; id: string; part: string; made: boolean }[]>`
    with t as (select distinct * from ${idList(tx, ids)}),
    made as (
      insert into span_parts (organization_id, trace_id, part_at) select org, id, now() from t
      on conflict do nothing
      returning organization_id, trace_id, part_at
    )
    select t.org, t.id, coalesce(m.part_at, k.part_at)::text as part, m.part_at is not null as made
    from t
    left join made m on m.organization_id = t.org and m.trace_id = t.id
    left join span_parts k on k.organization_id = t.org and k.trace_id = t.id`;
  return {
    parts: new Map(rows.map((r) => [`${r.org}/${r.id}`, r.part])),
    made: new Set(rows.filter((r) => r.made).map((r) => `${r.org}/${r.id}`)),
  };
}

/** One span's events folded into its stored state (`before`): its derived fields and the row to write. */
function foldSpan(list: readonly SpanEvent[], before: StoredRow | undefined) {
  const [{ organization_id, trace_id }] = list;
  const state = foldEvents(
    before && rowToState(before),
    [...list].sort((a, b) => a.seq - b.seq),
  );
  const fields = withEstimatedUsage(deriveFields(trace_id, state.fields));
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
  // A field without a value is left out of the row: jsonb_populate_recordset reads it as null. A completion's log
  // has values in about twenty of the forty-one fields; its row's JSON is then a third shorter to write and parse.
  for (const field of FIELDS) if (fields[field] != null) row[columnOf(field)] = fields[field];
  return { created: state.created, fields, row };
}

/**
 * An LLM span logged without usage gets its usage counted and priced, marked as estimated. The estimate is
 * derived, like the fields above: kept out of the span's versions, it is made again at every write of the
 * span until usage arrives, which then takes its place.
 */
function withEstimatedUsage(fields: Record<string, unknown>): Record<string, unknown> {
  const estimate = estimateSpanUsage(fields);
  return estimate ? { ...fields, ...estimate, usage_estimated: true } : fields;
}

/** Marks running the experiments that spans created by this batch belong to. */
async function markCreatedExperimentsRunning(tx: Sql, rows: Record<string, unknown>[]): Promise<void> {
  const experiments = rows
    .filter((r) => r.created && r.experiment_uuid)
    .map((r) => ({ org: r.organization_id as string, experiment: r.experiment_uuid as string }));
  await markExperimentsRunning(tx, [...new Map(experiments.map((e) => [`${e.org}/${e.experiment}`, e])).values()]);
}

/**
 * Applies span events in one transaction: locks the touched spans, folds the events into their stored
 * state, and writes every row back in multi-row upserts. Where the tree decides a span's depth or
 * execution order (the client sent none), the touched traces are locked and recomputed.
 * Answers the spans whose evaluations must now run.
 */
export async function applySpanEvents(sql: Sql, events: readonly SpanEvent[]): Promise<SpansWritten> {
  try {
    return await applyEvents(sql, events);
  } catch (err) {
    // Today's partition is missing (the service was down for longer than the days made ahead): make it.
    if ((err as { code?: string }).code !== NO_PARTITION) throw err;
    await ensureSpanPartitions(sql);
    return applyEvents(sql, events);
  }
}

async function applyEvents(sql: Sql, events: readonly SpanEvent[]): Promise<SpansWritten> {
  const byKey = groupBySpan(events);
  const triggers: EvalTrigger[] = [];
  const traces = new Map<string, WrittenTrace>();
  await transaction(sql, async (tx) => {
    const stored = await lockAndReadSpans(tx, byKey);
    const spans = [...byKey.entries()].map(([key, list]) => {
      const before = stored.get(key);
      const folded = foldSpan(list, before?.row);
      const [{ organization_id, trace_id }] = list;
      const trigger = evalTriggers({ organization_id, trace_id }, list, folded.created, folded.fields);
      if (trigger) triggers.push(trigger);
      const root = { org: list[0].organization_id, root: folded.fields.root_trace_id as string };
      const written = changedTrace(list, folded);
      if (written) traces.set(`${root.org}/${root.root}`, written);
      // The trace a created span was counted in, when a create now names another root for it.
      const left = before?.row?.created && before.row.root_trace_id !== root.root ? before.row : undefined;
      // A span goes to its trace's partition: a new one, one stored by updates alone that is created now (it
      // was stored under itself as root, not knowing its trace), and one created again under another root
      // (but a root itself, whose key its old trace's spans follow).
      const moves = before?.row && folded.created && (!before.row.created || (left && left.root_trace_id !== trace_id));
      const placed = before && !moves ? before.part : undefined;
      return { ...folded, before, root, placed, left, recount: changesTotals(before?.row, folded) };
    });

    // Writers of one trace are serialized by its lock, taken before any row is written (so nobody waits
    // for it while holding row locks another writer needs). Whoever writes last then sees every span of
    // the trace committed, and orders the spans still waiting for their place in the tree. The lock also
    // makes the trace's partition key once, and serializes the recounts of its totals: only created spans
    // count in them, and a span that leaves a trace changes that trace's too.
    const locked = new Map(
      spans.filter((s) => s.created || !s.placed).map((s) => [`${s.root.org}/${s.root.root}`, s.root]),
    );
    for (const { root, left } of spans)
      if (left) locked.set(`${root.org}/${left.root_trace_id}`, { org: root.org, root: left.root_trace_id as string });
    if (locked.size)
      await takeLocks(
        tx,
        [...locked.values()].map((r) => `root/${r.org}/${r.root}`),
      );
    const { parts: traceParts, made: newTraces } = await tracePartitions(
      tx,
      spans.filter((s) => !s.placed).map((s) => s.root),
    );
    const moved: { org: string; id: string; from: string; to: string }[] = [];
    const placedTraces = new Map<string, TraceRoot>();
    const recounted = new Map<string, TraceRoot>();
    for (const span of spans) {
      const part = span.placed ?? traceParts.get(`${span.root.org}/${span.root.root}`)!;
      if (span.before && span.before.part !== part) {
        moved.push({ org: span.root.org, id: span.row.trace_id as string, from: span.before.part, to: part });
      }
      span.row.part_at = part;
      if (span.created) placedTraces.set(`${span.root.org}/${span.root.root}`, { ...span.root, part });
      if (span.recount) recounted.set(`${span.root.org}/${span.root.root}`, { ...span.root, part });
      if (span.left) {
        const root = span.left.root_trace_id as string;
        recounted.set(`${span.root.org}/${root}`, { org: span.root.org, root, part: span.before!.part });
      }
    }
    if (moved.length) await moveSpans(tx, moved);
    const rows = spans.map((s) => s.row);
    const unsettled = setBatchTraceTotals(rows);
    await tx.unsafe(UPSERT, [rowsJson(rows)], { prepare: true });
    await markCreatedExperimentsRunning(tx, rows);
    await reattachOtelChildren(tx, events);
    // A trace new to the store has all its spans in this batch, so it waits for its order only if one of them
    // does; asking the table cost every completion's log a statement and a plan over the partitions (issue 39).
    const unordered = new Set(
      spans
        .filter((s) => s.created && (s.row.depth == null || s.row.execution_order == null))
        .map((s) => `${s.root.org}/${s.root.root}`),
    );
    const waiting = [...placedTraces].filter(([key]) => !newTraces.has(key) || unordered.has(key));
    if (waiting.length)
      await orderWaitingSpans(
        tx,
        waiting.map(([, root]) => root),
      );
    // A trace new to the store has all its spans in this batch, so its root was inserted with its totals
    // (unless setBatchTraceTotals left it unsettled). The recount's query was most of a completion log's
    // write in PostgreSQL (issue 39).
    const recount = [...recounted.entries()].filter(([key]) => !newTraces.has(key) || unsettled.has(key));
    await storeTraceTotals(
      tx,
      recount.map(([, root]) => root),
    );
  });
  return { evalTriggers: triggers, traces: [...traces.values()] };
}

/** A production trace whose spans this write created or changed: what evaluation rules watch. */
export type WrittenTrace = { organization_id: string; project_id: string; root_trace_id: string };
export type SpansWritten = {
  /** The spans whose own evaluations (evaluation_metric_names) must now run. */
  evalTriggers: EvalTrigger[];
  traces: WrittenTrace[];
};

/**
 * The span's trace, when these events changed what a rule evaluates: a create or an update of a span
 * stored as created, outside an experiment, and not a judge's own call (logged in the trace it judges,
 * where it would wake the rules that made it).
 */
function changedTrace(list: readonly SpanEvent[], folded: { created: boolean; fields: Record<string, unknown> }) {
  const { fields } = folded;
  if (!folded.created || fields.experiment_uuid || !fields.project_id) return null;
  if (!list.some((e) => e.kind === 'create' || e.kind === 'update')) return null;
  const metadata = fields.metadata as Record<string, unknown> | null | undefined;
  if (metadata && JUDGE_CALL in metadata) return null;
  return {
    organization_id: list[0].organization_id,
    project_id: fields.project_id as string,
    root_trace_id: fields.root_trace_id as string,
  };
}

/** What a span adds to its trace's stored totals (trace-total.ts). */
const TOTALLED = ['cost', 'total_tokens', 'input_tokens', 'output_tokens'] as const;
const modelOf = (row: Record<string, unknown>) => (row.configuration as { model?: unknown } | null)?.model ?? null;

/**
 * Whether a span's share of its trace's totals changed: created now, in another trace, at another cost or
 * count, or calling another model.
 */
function changesTotals(before: StoredRow | undefined, folded: { created: boolean; fields: Record<string, unknown> }) {
  const { fields } = folded;
  if (!folded.created) return false;
  if (!before?.created || before.root_trace_id !== fields.root_trace_id) return true;
  return TOTALLED.some((c) => (before[c] ?? null) !== (fields[c] ?? null)) || modelOf(before) !== modelOf(fields);
}

/** The metadata key that marks a judge's call, logged as a child of the span it judges. */
export const JUDGE_CALL = 'sightline_judge';

/** Spans now in another trace's partition (created at last, or again under another root): their rows go, the upsert writes them anew. */
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
