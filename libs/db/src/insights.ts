import type { Sql } from './client';

// Aggregates for the console's dashboard and its sessions and users pages. A trace's tokens and cost are
// counted as everywhere in the console: the root's own value when the client set one there, else the sum
// over the trace's spans (see console.ts), so that the dashboard adds up to the traces table.

const traceTotal = (column: string) =>
  `coalesce(s.${column}, (select sum(c.${column}) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created))`;
const utc = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

export type Window = { organizationId: string; projectId: string; from: Date; to: Date; bucketSeconds: number };

/** The project's roots started in the window, with their trace totals: what every dashboard figure reads. */
function rootsIn(sql: Sql, w: Window) {
  return sql`
    select s.trace_id, s.start_ts, s.status, s.latency, s.scores, s.feedback_score,
      date_bin(${`${w.bucketSeconds} seconds`}::interval, s.start_ts, ${w.from}) as bucket,
      ${sql.unsafe(traceTotal('input_tokens'))} as input_tokens, ${sql.unsafe(traceTotal('output_tokens'))} as output_tokens,
      ${sql.unsafe(traceTotal('cost'))} as cost
    from spans s
    where s.organization_id = ${w.organizationId} and s.project_id = ${w.projectId} and s.created and s.depth = 0
      and s.start_ts >= ${w.from} and s.start_ts < ${w.to}`;
}

/** Per bucket and in total: traces, errors, latency percentiles, tokens and cost. */
export async function dashboardSeries(sql: Sql, w: Window) {
  const figures = sql`
    count(*)::int as traces, count(*) filter (where r.status = 'error')::int as errors,
    percentile_cont(0.5) within group (order by r.latency) as latency_p50,
    percentile_cont(0.95) within group (order by r.latency) as latency_p95,
    percentile_cont(0.99) within group (order by r.latency) as latency_p99,
    coalesce(sum(r.input_tokens), 0)::float8 as input_tokens, coalesce(sum(r.output_tokens), 0)::float8 as output_tokens,
    coalesce(sum(r.cost), 0)::float8 as cost`;
  const [buckets, [totals]] = await Promise.all([
    sql`select ${sql.unsafe(utc('r.bucket'))} as start, ${figures} from (${rootsIn(sql, w)}) r group by r.bucket order by r.bucket`,
    sql`select ${figures} from (${rootsIn(sql, w)}) r`,
  ]);
  return { buckets, totals };
}

/** Cost and calls by model, over the LLM spans (those with a model) of the window's traces. */
export function costByModel(sql: Sql, w: Window) {
  return sql<{ model: string; calls: number; cost: number }[]>`
    select c.configuration->>'model' as model, count(*)::int as calls, coalesce(sum(c.cost), 0)::float8 as cost
    from (${rootsIn(sql, w)}) r
    join spans c on c.organization_id = ${w.organizationId} and c.root_trace_id = r.trace_id and c.created
    where c.configuration ? 'model'
    group by 1 order by cost desc, calls desc limit 20`;
}

/** The mean of each score of the roots, and of their feedback, per bucket. */
export async function scoreSeries(sql: Sql, w: Window) {
  const [scores, feedback] = await Promise.all([
    sql<{ name: string; start: string; mean: number; count: number }[]>`
      select e->>'name' as name, ${sql.unsafe(utc('r.bucket'))} as start, avg((e->>'score')::float8) as mean, count(*)::int as count
      from (${rootsIn(sql, w)}) r, jsonb_array_elements(coalesce(r.scores, '[]')) e
      where jsonb_typeof(e->'score') = 'number'
      group by 1, r.bucket order by 1, r.bucket`,
    sql<{ start: string; mean: number; count: number }[]>`
      select ${sql.unsafe(utc('r.bucket'))} as start, avg(r.feedback_score) as mean, count(*)::int as count
      from (${rootsIn(sql, w)}) r where r.feedback_score is not null group by r.bucket order by r.bucket`,
  ]);
  return { scores, feedback };
}

export type GroupBy = 'session_id' | 'end_user_identifier';

/** The project's traces grouped by session or by user, most recently active first. */
export function traceGroups(
  sql: Sql,
  q: { organizationId: string; projectId: string; by: GroupBy; since: Date | null; page: number; pageSize: number },
) {
  const key = q.by === 'session_id' ? sql`s.session_id` : sql`s.end_user_identifier`;
  return sql<Record<string, unknown>[]>`
    select ${key} as key, count(*)::int as traces, count(*) over ()::int as total,
      ${sql.unsafe(utc('min(s.start_ts)'))} as first_start, ${sql.unsafe(utc('max(s.start_ts)'))} as last_start,
      count(*) filter (where s.status = 'error')::int as errors, avg(s.latency) as latency_avg,
      coalesce(sum(${sql.unsafe(traceTotal('cost'))}), 0)::float8 as cost, avg(s.feedback_score) as feedback_mean
    from spans s
    where s.organization_id = ${q.organizationId} and s.project_id = ${q.projectId} and s.created and s.depth = 0
      and ${key} is not null ${q.since ? sql`and s.start_ts >= ${q.since}` : sql``}
    group by 1 order by max(s.start_ts) desc nulls last, 1
    limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}`;
}

/** One session's (or user's) traces in the order they happened, with what was said in each. */
export async function tracesOfGroup(
  sql: Sql,
  q: { organizationId: string; projectId: string; by: GroupBy; key: string },
): Promise<string> {
  const key = q.by === 'session_id' ? sql`s.session_id` : sql`s.end_user_identifier`;
  const [{ traces }] = await sql<{ traces: string }[]>`
    select coalesce(json_agg(json_build_object(
      'trace_id', s.trace_id, 'trace_name', s.trace_name, 'start_timestamp', ${sql.unsafe(utc('s.start_ts'))},
      'latency', s.latency, 'status', s.status, 'error', s.error, 'inputs', s.inputs, 'output', s.output,
      'cost', ${sql.unsafe(traceTotal('cost'))}, 'feedback_score', s.feedback_score, 'end_user_identifier', s.end_user_identifier,
      'session_id', s.session_id
    ) order by s.start_ts nulls last, s.trace_id), '[]')::text as traces
    from spans s
    where s.organization_id = ${q.organizationId} and s.project_id = ${q.projectId} and s.created and s.depth = 0 and ${key} = ${q.key}`;
  return traces;
}
