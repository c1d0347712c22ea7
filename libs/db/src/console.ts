import { ROW_PREVIEW_CHARS } from '@sightline/schemas';
import type { Sql } from './client';
import { searchPlanOf } from './search';
import { partOfSpan, spansByKey } from './span-json';
import { countRoots, rootIds, type RootQuery } from './root-listing';
import { startsSince } from './trace-start';
import { traceTotal } from './trace-total';

// Reads for the web console. PostgreSQL writes the JSON: a 10,000-span skeleton is one text value that
// goes to the browser as it is.

// ISO 8601 in UTC to the millisecond: a timeline places spans of a few milliseconds by their starts.
const utc = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The organization's projects, with their production traces (experiment runs' apart) all time and their
 * last 24 hours' traces, cost and errors; the last activity counts every trace.
 */
export function projectSummaries(sql: Sql, organizationId: string) {
  return sql<
    {
      uuid: string;
      name: string;
      created_at: string;
      traces: number;
      last_activity: string | null;
      traces_24h: number;
      cost_24h: number;
      error_rate_24h: number | null;
    }[]
  >`
    select p.id as uuid, p.name, ${sql.unsafe(utc('p.created_at'))} as created_at,
      coalesce(r.traces, 0)::int as traces, ${sql.unsafe(utc('greatest(r.last_start, u.last_start)'))} as last_activity,
      coalesce(d.traces, 0)::int as traces_24h, coalesce(d.cost, 0)::float8 as cost_24h,
      case when d.traces > 0 then d.errors::float8 / d.traces end as error_rate_24h
    from projects p
    left join lateral (
      select count(*) as traces, max(s.start_ts) as last_start from spans s
      where s.organization_id = p.organization_id and s.project_id = p.id and s.created and s.depth = 0
        and s.experiment_uuid is null
    ) r on true
    -- Roots without a start start when first stored, as the listing shows them (spans_roots_unstarted).
    left join lateral (
      select max(s.created_at) as last_start from spans s
      where s.organization_id = p.organization_id and s.project_id = p.id and s.created and s.depth = 0 and s.start_ts is null
    ) u on true
    left join lateral (
      select count(*) as traces, count(*) filter (where s.status = 'error') as errors, sum(${sql.unsafe(traceTotal('s', 'cost'))}) as cost
      from spans s
      where s.organization_id = p.organization_id and s.project_id = p.id and s.created and s.depth = 0
        and s.experiment_uuid is null and ${sql.unsafe(startsSince('s', "now() - interval '24 hours'"))}
    ) d on true
    where p.organization_id = ${organizationId}
    order by greatest(r.last_start, u.last_start) desc nulls last, p.name`;
}

export type TraceRowsPage = {
  /** The matching traces; with `exact` false, how many were found so far (there may be more). */
  total: number;
  exact: boolean;
  /** When a search tested only the newest roots and found fewer than a page: how many it tested. */
  searchedRoots: number | null;
  /** The page's rows as a JSON array (traceRowsOf). */
  rows: string;
};

/**
 * A page of root traces as table rows (the root's fields; the trace's tokens, cost and span count), newest
 * first, with the total. A search for common words walks the newest roots (searchPlanOf): its total is
 * exact only when the walk saw every root.
 */
export async function traceRowsPage(
  sql: Sql,
  q: RootQuery,
  { count = true, ...content }: RowContent & { count?: boolean } = {},
): Promise<TraceRowsPage> {
  const plan = q.search ? await searchPlanOf(sql, q.search, q.page * q.pageSize) : ({ by: 'index' } as const);
  const query = { ...q, searchPlan: plan };
  if (plan.by === 'index') {
    if (!count) {
      // The page alone: a page that is not full is the last one, so its total is known all the same.
      const ids = await rootIds(sql, query);
      const total = (q.page - 1) * q.pageSize + ids.length;
      const exact = ids.length < q.pageSize && (ids.length > 0 || q.page === 1);
      return { total, exact, searchedRoots: null, rows: await traceRowsOf(sql, q.organizationId, ids, content) };
    }
    const [total, ids] = await Promise.all([countRoots(sql, query), rootIds(sql, query)]);
    return { total, exact: true, searchedRoots: null, rows: await traceRowsOf(sql, q.organizationId, ids, content) };
  }
  const [candidates, ids] = await Promise.all([
    countRoots(sql, { ...q, search: null }, plan.roots + 1),
    rootIds(sql, query),
  ]);
  const full = ids.length === q.pageSize,
    sawAll = candidates <= plan.roots;
  return {
    total: (q.page - 1) * q.pageSize + ids.length,
    exact: !full && sawAll,
    searchedRoots: full || sawAll ? null : plan.roots,
    rows: await traceRowsOf(sql, q.organizationId, ids, content),
  };
}

/**
 * The number of root traces a listing matches, for a page asked without it; null when its search walks the
 * newest roots (searchPlanOf), which cannot count them all.
 */
export async function countTraceRows(sql: Sql, q: RootQuery): Promise<number | null> {
  const plan = q.search ? await searchPlanOf(sql, q.search, q.pageSize) : ({ by: 'index' } as const);
  return plan.by === 'index' ? countRoots(sql, { ...q, searchPlan: plan }) : null;
}

/** How much of an output a sample row carries: the trace view has all of it. */
const OUTPUT_CHARS = 2000;

/** What a table row carries beyond the root's figures: previews of its payloads, values of metadata keys. */
type RowContent = { payload?: boolean; content?: boolean; metadataKeys?: readonly string[] };

/**
 * The rows of these root traces, in this order, as a JSON array; ids the organization lacks are left out.
 * With `payload`, each row also has the root's inputs, target and output (cut to OUTPUT_CHARS, flagged);
 * with `content`, the start of its inputs and output (ROW_PREVIEW_CHARS); with `metadataKeys`, those
 * keys' values, a long one cut as text.
 */
export async function traceRowsOf(
  sql: Sql,
  organizationId: string,
  ids: string[],
  { payload = false, content = false, metadataKeys = [] }: RowContent = {},
): Promise<string> {
  if (!ids.length) return '[]';
  const contentMembers = content
    ? sql`'input_preview', left(s.inputs::text, ${ROW_PREVIEW_CHARS}), 'output_preview', left(s.output, ${ROW_PREVIEW_CHARS}),`
    : sql``;
  const metadataMembers = metadataKeys.length
    ? sql`'metadata_values', coalesce((
        select jsonb_object_agg(k, case when length(s.metadata -> k #>> '{}') > ${ROW_PREVIEW_CHARS}
          then to_jsonb(left(s.metadata -> k #>> '{}', ${ROW_PREVIEW_CHARS})) else s.metadata -> k end)
        from unnest(${sql.array(metadataKeys as string[])}::text[]) k where jsonb_typeof(s.metadata) = 'object' and s.metadata ? k
      ), '{}'::jsonb),`
    : sql``;
  const payloadMembers = payload
    ? sql`'inputs', s.inputs, 'target', s.target, 'output', left(s.output, ${OUTPUT_CHARS}),
      'output_truncated', coalesce(length(s.output) > ${OUTPUT_CHARS}, false),`
    : sql``;
  const [{ rows }] = await sql<{ rows: string }[]>`
    select coalesce(json_agg(json_build_object(${payloadMembers} ${contentMembers} ${metadataMembers}
      'trace_id', s.trace_id, 'project_uuid', s.project_id, 'trace_name', s.trace_name,
      'start_timestamp', ${sql.unsafe(utc('coalesce(s.start_ts, s.created_at)'))}, 'end_timestamp', ${sql.unsafe(utc('s.end_ts'))},
      'latency', s.latency, 'input_tokens', ${sql.unsafe(traceTotal('s', 'input_tokens', { inPartition: true }))}, 'output_tokens', ${sql.unsafe(traceTotal('s', 'output_tokens', { inPartition: true }))},
      'total_tokens', ${sql.unsafe(traceTotal('s', 'total_tokens', { inPartition: true }))}, 'cost', ${sql.unsafe(traceTotal('s', 'cost', { inPartition: true }))}, 'status', s.status, 'error', s.error, 'scores', coalesce(s.scores, '[]'::jsonb),
      'feedback_score', s.feedback_score, 'tags', coalesce(s.tags, '{}'), 'end_user_identifier', s.end_user_identifier,
      'session_id', s.session_id, 'experiment_uuid', s.experiment_uuid,
      'usage_estimated', coalesce(s.trace_usage_estimated, false),
      'span_count', (select count(*) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id
        and c.part_at = s.part_at and c.created)
    ) order by r.n), '[]')::text as rows
    from ${spansByKey(sql, organizationId, ids, 'trace_id')}`;
  return rows;
}

/**
 * The skeleton of the trace holding `traceId`: each span's place, name, kind (a LangChain run's type, the
 * kind OpenTelemetry intake read from its conventions, else `llm` for a model call), timing, status, tokens
 * and cost, in execution order; and the experiment run that logged the trace (its root's, null for production
 * traffic); null when the organization has no such span.
 */
export async function traceSkeleton(sql: Sql, organizationId: string, traceId: string): Promise<Buffer | null> {
  // The spans are sorted as narrow rows (the kind picked out of their JSON first) and aggregated in that order:
  // an ordered aggregate would sort the built objects, with each span's metadata, a quarter of the time here.
  // The envelope is written here: built by json_build_object around the spans' JSON, that JSON would be copied
  // through PostgreSQL's output once more, a fifth of the time. A trace's spans all sit in the partition of
  // the span asked for (span-writes.ts places them there): naming it reads one day, not every day's index.
  const part = await partOfSpan(sql, organizationId, traceId);
  if (part === null) return null;
  const [row] = (await sql`
    select t.root_trace_id,
      (select r.experiment_uuid from spans r
        where r.organization_id = t.organization_id and r.trace_id = t.root_trace_id and r.part_at = ${part}::timestamptz
          and r.created) as experiment_uuid,
      (select json_agg(json_build_object(
        'trace_id', s.trace_id, 'parent_trace_id', s.parent_trace_id, 'trace_name', s.trace_name, 'kind', s.kind,
        'start_timestamp', ${sql.unsafe(utc('s.start_ts'))}, 'end_timestamp', ${sql.unsafe(utc('s.end_ts'))},
        'latency', s.latency, 'status', s.status, 'input_tokens', s.input_tokens, 'output_tokens', s.output_tokens,
        'total_tokens', s.total_tokens, 'cost', s.cost, 'usage_estimated', s.usage_estimated, 'depth', s.depth, 'execution_order', s.execution_order
      ))
      from (
        select s.trace_id, s.parent_trace_id, s.trace_name,
          coalesce(s.metadata->>'run_type', s.metadata->>'kind', case when s.configuration ? 'model' then 'llm' end) as kind,
          coalesce(s.start_ts, s.created_at) as start_ts, s.end_ts, s.latency, s.status, s.input_tokens, s.output_tokens,
          s.total_tokens, s.cost, coalesce(s.usage_estimated, false) as usage_estimated, coalesce(s.depth, 0) as depth,
          coalesce(s.execution_order, 0) as execution_order
        from spans s where s.organization_id = t.organization_id and s.root_trace_id = t.root_trace_id
          and s.part_at = ${part}::timestamptz and s.created
        order by s.execution_order nulls last, s.start_ts nulls last, s.trace_id
      ) s)::text as spans
    from spans t where t.organization_id = ${organizationId} and t.trace_id = ${traceId} and t.created
      and t.part_at = ${part}::timestamptz`.raw()) as unknown as [Buffer, Buffer | null, Buffer | null][];
  if (!row) return null;
  const [root, experiment, spans] = row;
  const head = `{"root_trace_id":"${root.toString('latin1')}","experiment_uuid":${experiment ? `"${experiment.toString('latin1')}"` : 'null'},"spans":`;
  return Buffer.concat([Buffer.from(head), spans ?? EMPTY_LIST, CLOSE_BRACE]);
}
const EMPTY_LIST = Buffer.from('[]'),
  CLOSE_BRACE = Buffer.from('}');
