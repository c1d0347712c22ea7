import { createHash } from 'node:crypto';
import { compileFilter, deriveFields, foldEvents, formatTimestamp, unitHash, type FilterInput, type SpanState, type Versions } from '@sightline/core';
import { SpanEventFields, type SpanEvent } from '@sightline/schemas';
import type { Sql } from './client';
import { markExperimentsRunning } from './experiments';

// Wire field name -> column, where they differ.
const COLUMN_OF: Record<string, string> = { start_timestamp: 'start_ts', end_timestamp: 'end_ts' };
const JSONB = new Set(['inputs', 'configuration', 'metadata', 'scores', 'images', 'comments', 'annotations', 'eval_scores']);
const TIMESTAMPS = new Set(['start_timestamp', 'end_timestamp']);
const FIELDS = Object.keys(SpanEventFields.shape);
const columnOf = (field: string) => COLUMN_OF[field] ?? field;
const WRITE_COLUMNS = ['organization_id', 'trace_id', 'created', 'versions', ...FIELDS.map(columnOf)];
// PostgreSQL takes at most 65535 parameters in one statement.
const ROWS_PER_STATEMENT = Math.floor(60_000 / WRITE_COLUMNS.length);

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
function evalTriggers(key: { organization_id: string; trace_id: string }, list: readonly SpanEvent[], created: boolean, fields: Record<string, unknown>): EvalTrigger | null {
  const names = fields.evaluation_metric_names as string[] | null | undefined;
  if (!created || !names?.length || (fields.output == null && fields.end_timestamp == null)) return null;
  if (!list.some((e) => e.kind === 'create' || EVALUATED_FIELDS.some((f) => f in e.fields))) return null;
  const fraction = (fields.apply_eval_frac as number | null | undefined) ?? 1;
  if (fraction < 1 && !(fraction > 0 && unitHash(`eval:${key.trace_id}`) < fraction)) return null;
  return { ...key, metric_names: [...new Set(names)], seq: Math.max(...list.map((e) => e.seq)) };
}

/**
 * Applies span events in one transaction: locks the touched spans, folds the events into their stored
 * state, and writes every row back in multi-row upserts. Where the tree decides a span's depth or
 * execution order (the client sent none), the touched traces are locked and recomputed.
 * Answers the spans whose evaluations must now run.
 */
export async function applySpanEvents(sql: Sql, events: readonly SpanEvent[]): Promise<EvalTrigger[]> {
  const byKey = new Map<string, SpanEvent[]>();
  for (const e of events) {
    const key = `${e.organization_id}/${e.trace_id}`;
    const list = byKey.get(key);
    if (list) list.push(e);
    else byKey.set(key, [e]);
  }
  const keys = [...byKey.values()].map(([e]) => ({ org: e.organization_id, id: e.trace_id }));
  const orgs = keys.map((k) => k.org), ids = keys.map((k) => k.id);

  const triggers: EvalTrigger[] = [];
  await sql.begin(async (txn) => {
    const tx = txn as unknown as Sql;
    await takeLocks(tx, keys.map((k) => `span/${k.org}/${k.id}`));
    const stored = await tx`
      select s.organization_id, s.trace_id, s.created, s.versions, s.depth as stored_depth, s.execution_order as stored_order,
             ${tx.unsafe(FIELDS.map(selectField).join(', '))}
      from spans s
      join unnest(${tx.array(orgs)}::uuid[], ${tx.array(ids)}::uuid[]) as k(org, id) on s.organization_id = k.org and s.trace_id = k.id`;
    const previous = new Map(stored.map((row) => [`${row.organization_id}/${row.trace_id}`, row]));

    const traces = new Map<string, { org: string; root: string }>();
    const rows = [...byKey.entries()].map(([key, list]) => {
      const [{ organization_id, trace_id }] = list;
      const before = previous.get(key);
      const state = foldEvents(before && rowToState(before), [...list].sort((a, b) => a.seq - b.seq));
      const fields = deriveFields(trace_id, state.fields);
      // Depth and order the tree decided earlier stay until the tree is recomputed.
      fields.depth ??= before?.stored_depth ?? null;
      fields.execution_order ??= before?.stored_order ?? null;
      if (state.created) traces.set(`${organization_id}/${fields.root_trace_id}`, { org: organization_id, root: fields.root_trace_id as string });
      const trigger = evalTriggers({ organization_id, trace_id }, list, state.created, fields);
      if (trigger) triggers.push(trigger);
      const row: Record<string, any> = { organization_id, trace_id, created: state.created, versions: tx.json(state.versions) };
      for (const field of FIELDS) {
        const value = fields[field] ?? null;
        row[columnOf(field)] = value !== null && JSONB.has(field) ? tx.json(value as never) : value;
      }
      return row;
    });

    // Writers of one trace are serialized by its lock, taken before any row is written (so nobody waits
    // for it while holding row locks another writer needs). Whoever writes last then sees every span of
    // the trace committed, and orders the spans still waiting for their place in the tree.
    const roots = [...traces.values()];
    if (roots.length) await takeLocks(tx, roots.map((r) => `root/${r.org}/${r.root}`));
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await tx`
        insert into spans ${tx(rows.slice(i, i + ROWS_PER_STATEMENT), WRITE_COLUMNS)}
        on conflict (organization_id, trace_id) do update set
          ${tx.unsafe(WRITE_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', '))},
          updated_at = now()`;
    }
    const experiments = rows.filter((r) => r.created && r.experiment_uuid).map((r) => ({ org: r.organization_id as string, experiment: r.experiment_uuid as string }));
    await markExperimentsRunning(tx, [...new Map(experiments.map((e) => [`${e.org}/${e.experiment}`, e])).values()]);
    if (!roots.length) return;
    const unordered = await tx<{ org: string; root: string }[]>`
      select distinct s.organization_id as org, s.root_trace_id as root
      from spans s join unnest(${tx.array(roots.map((r) => r.org))}::uuid[], ${tx.array(roots.map((r) => r.root))}::uuid[]) as r(org, root)
        on s.organization_id = r.org and s.root_trace_id = r.root
      where s.created and (s.depth is null or s.execution_order is null)`;
    if (unordered.length) await recomputeTreeOrder(tx, unordered);
  });
  return triggers;
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
async function recomputeTreeOrder(sql: Sql, unique: { org: string; root: string }[]): Promise<void> {
  await sql`
    with recursive tree as (
      select s.organization_id, s.trace_id, 0 as depth
      from spans s
      join unnest(${sql.array(unique.map((r) => r.org))}::uuid[], ${sql.array(unique.map((r) => r.root))}::uuid[]) as r(org, root)
        on s.organization_id = r.org and s.trace_id = r.root
      where s.created and s.parent_trace_id = s.trace_id
      union all
      select c.organization_id, c.trace_id, tree.depth + 1
      from tree
      join spans c on c.organization_id = tree.organization_id and c.parent_trace_id = tree.trace_id
      where c.created and c.trace_id <> c.parent_trace_id and tree.depth < 100000
    ),
    ordered as (
      select s.organization_id, s.trace_id, tree.depth,
        (row_number() over (partition by s.organization_id, s.root_trace_id
                            order by tree.depth = 0 desc, s.start_ts nulls last, tree.depth, s.created_at, s.trace_id) - 1)::int
          as execution_order
      from tree join spans s on s.organization_id = tree.organization_id and s.trace_id = tree.trace_id
    )
    update spans s set
      depth = case when ${sql.unsafe(explicit('depth'))} then s.depth else o.depth end,
      execution_order = case when ${sql.unsafe(explicit('execution_order'))} then s.execution_order else o.execution_order end
    from ordered o
    where s.organization_id = o.organization_id and s.trace_id = o.trace_id
      and ((not ${sql.unsafe(explicit('depth'))} and s.depth is distinct from o.depth)
        or (not ${sql.unsafe(explicit('execution_order'))} and s.execution_order is distinct from o.execution_order))`;
}

/** SQL: the client (not the tree) set this field of span `s`. */
function explicit(field: 'depth' | 'execution_order'): string {
  return `(s.versions -> 'create' ? '${field}' or s.versions -> 'update' ? '${field}')`;
}

// ---- Reading -------------------------------------------------------------------------------------------

const READ_COLUMNS = `
  s.trace_id, s.root_trace_id, s.parent_trace_id, s.trace_name, s.project_id as project_uuid, p.name as project_name,
  s.organization_id, s.inputs, s.output, s.target, s.start_ts as start_timestamp, s.end_ts as end_timestamp,
  s.status, s.error, s.configuration, s.metadata, s.tags, s.depth, s.execution_order, s.time_to_first_token,
  s.latency, s.input_tokens, s.output_tokens, s.total_tokens, s.cost, s.output_for_eval_metrics,
  s.evaluation_metric_names, s.scores, s.feedback_score, s.feedback_comment, s.children_ids,
  coalesce(s.apply_eval_frac, 1) as apply_eval_frac, coalesce(s.log_sample_rate, 1) as log_sample_rate,
  s.deployment_id, s.cache_hit, s.end_user_identifier, s.session_id, s.experiment_uuid, s.images, s.comments,
  s.annotations`;

export type TraceLogRow = Record<string, unknown> & { trace_id: string; parent_trace_id: string; root_trace_id: string };

function toTraceLog(row: Record<string, unknown>): TraceLogRow {
  return {
    ...(row as TraceLogRow),
    start_timestamp: formatTimestamp(row.start_timestamp as Date | null),
    end_timestamp: formatTimestamp(row.end_timestamp as Date | null),
  };
}

/** Every visible span of the trace that holds `traceId`, or null when the span is unknown to this organization. */
export async function findTraceOf(sql: Sql, organizationId: string, traceId: string): Promise<TraceLogRow[] | null> {
  const rows = await sql`
    select ${sql.unsafe(READ_COLUMNS)}
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.created and s.root_trace_id = (
      select root_trace_id from spans where organization_id = ${organizationId} and trace_id = ${traceId} and created)`;
  return rows.length ? rows.map(toTraceLog) : null;
}

export async function spansOfRoots(sql: Sql, organizationId: string, rootIds: readonly string[]): Promise<TraceLogRow[]> {
  if (!rootIds.length) return [];
  const rows = await sql`
    select ${sql.unsafe(READ_COLUMNS)}
    from spans s left join projects p on p.id = s.project_id
    where s.organization_id = ${organizationId} and s.root_trace_id = any(${sql.array(rootIds as string[])}::uuid[]) and s.created`;
  return rows.map(toTraceLog);
}

const TIME_RANGE_INTERVAL: Record<string, string | null> = {
  na: null, '1h': '1 hour', '3h': '3 hours', '6h': '6 hours', '24h': '24 hours', '7d': '7 days',
  '1m': '1 month', '3m': '3 months', '6m': '6 months', '1y': '1 year',
};

export type RootQuery = {
  organizationId: string;
  projectId: string | null;
  experimentUuid?: string;
  filter?: FilterInput;
  timeRange?: string;
  status?: string | null;
  page: number;
  pageSize: number;
};

/** The listing's SQL: root spans, newest first. Throws FilterError for a bad filter. */
export function rootListingSql(q: RootQuery): { count: string; page: string; params: unknown[] } {
  const params: unknown[] = [q.organizationId, q.projectId];
  // No "$2 is null or ..." disjunction: it would keep the planner from using the project's index.
  const conditions = ['s.organization_id = $1', 's.created', 's.depth = 0', q.projectId ? 's.project_id = $2::uuid' : '$2::uuid is null'];
  if (q.experimentUuid) conditions.push(`s.experiment_uuid = $${params.push(q.experimentUuid)}::uuid`);
  const filter = q.filter && compileFilter(q.filter, params.length + 1);
  if (filter) {
    conditions.push(filter.text);
    params.push(...filter.params);
  }
  const interval = q.timeRange && TIME_RANGE_INTERVAL[q.timeRange];
  if (interval) conditions.push(`s.start_ts >= now() - $${params.push(interval)}::interval`);
  if (q.status) conditions.push(`s.status = $${params.push(q.status)}::text`);
  const where = conditions.join(' and ');
  const limit = params.push(q.pageSize), offset = params.push((q.page - 1) * q.pageSize);
  return {
    count: `select count(*)::int as total from spans s where ${where}`,
    page: `select s.trace_id from spans s where ${where} order by s.start_ts desc nulls last, s.trace_id desc limit $${limit} offset $${offset}`,
    params,
  };
}

/** One page of root span ids, without the total. */
export async function rootIds(sql: Sql, q: RootQuery): Promise<string[]> {
  const { page, params } = rootListingSql(q);
  return (await sql.unsafe(page, params as never[])).map((r) => r.trace_id as string);
}

/** One page of root spans with the exact total. */
export async function listRoots(sql: Sql, q: RootQuery): Promise<{ total: number; ids: string[] }> {
  const { count, page, params } = rootListingSql(q);
  const [[{ total }], rows] = await Promise.all([
    sql.unsafe(count, params.slice(0, -2) as never[]),
    sql.unsafe(page, params as never[]),
  ]);
  return { total, ids: rows.map((r) => r.trace_id as string) };
}
