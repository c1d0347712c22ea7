import type { Sql } from './client';

// Aggregates for the console's dashboard and its sessions and users pages. A trace's tokens and cost are
// counted as everywhere in the console: the root's own value when the client set one there, else the sum
// over the trace's spans (see console.ts), so that the dashboard adds up to the traces table.

const traceTotal = (column: string) =>
  `coalesce(s.${column}, (select sum(c.${column}) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created))`;
const utc = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

export type Window = { organizationId: string; projectId: string; from: Date; to: Date; bucketSeconds: number };

export type Dashboard = {
  buckets: Record<string, unknown>[];
  totals: Record<string, unknown>;
  models: { model: string; calls: number; cost: number }[];
  scores: { name: string; start: string; mean: number; count: number }[];
  feedback: { start: string; mean: number; count: number }[];
};

/**
 * Every figure of the dashboard in one statement, so that the window's roots and their spans are read once:
 * per bucket and in total, traces, errors, latency percentiles, tokens and cost; cost and calls by model
 * (over the spans with a model); the mean of each score of the roots and of their feedback, per bucket.
 * Five queries each reading the roots, three sums per root, cost 1.1-1.5 s for 7 days of 200k traces.
 */
export async function dashboard(sql: Sql, w: Window): Promise<Dashboard> {
  const figures = `
    count(*)::int as traces, count(*) filter (where t.status = 'error')::int as errors,
    percentile_cont(0.5) within group (order by t.latency) as latency_p50,
    percentile_cont(0.95) within group (order by t.latency) as latency_p95,
    percentile_cont(0.99) within group (order by t.latency) as latency_p99,
    coalesce(sum(t.input_tokens), 0)::float8 as input_tokens, coalesce(sum(t.output_tokens), 0)::float8 as output_tokens,
    coalesce(sum(t.cost), 0)::float8 as cost`;
  const [row] = await sql<Dashboard[]>`
    with roots as materialized (
      select s.trace_id, s.status, s.latency, s.scores, s.feedback_score, s.input_tokens, s.output_tokens, s.cost,
        date_bin(${`${w.bucketSeconds} seconds`}::interval, s.start_ts, ${w.from}) as bucket
      from spans s
      where s.organization_id = ${w.organizationId} and s.project_id = ${w.projectId} and s.created and s.depth = 0
        and s.start_ts >= ${w.from} and s.start_ts < ${w.to}
    ),
    -- Each trace's spans through the index by root, root by root (OFFSET 0 keeps the subquery from being
    -- flattened into a merge join that read every span of the organization).
    calls as materialized (
      select r.trace_id, c.input_tokens, c.output_tokens, c.cost, c.model
      from roots r cross join lateral (
        select c.input_tokens, c.output_tokens, c.cost, c.configuration->>'model' as model from spans c
        where c.organization_id = ${w.organizationId} and c.root_trace_id = r.trace_id and c.created offset 0
      ) c
    ),
    traces as (
      select r.bucket, r.status, r.latency, coalesce(r.input_tokens, x.input_tokens) as input_tokens,
        coalesce(r.output_tokens, x.output_tokens) as output_tokens, coalesce(r.cost, x.cost) as cost
      from roots r left join (
        select trace_id, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost) as cost
        from calls group by trace_id
      ) x using (trace_id)
    )
    select
      (select coalesce(json_agg(b order by b.start), '[]') from (
        select ${sql.unsafe(utc('t.bucket'))} as start, ${sql.unsafe(figures)} from traces t group by t.bucket
      ) b) as buckets,
      (select row_to_json(a) from (select ${sql.unsafe(figures)} from traces t) a) as totals,
      (select coalesce(json_agg(m order by m.cost desc, m.calls desc), '[]') from (
        select model, count(*)::int as calls, coalesce(sum(cost), 0)::float8 as cost
        from calls where model is not null group by model order by 3 desc, 2 desc limit 20
      ) m) as models,
      (select coalesce(json_agg(x order by x.name, x.start), '[]') from (
        select e->>'name' as name, ${sql.unsafe(utc('r.bucket'))} as start, avg((e->>'score')::float8) as mean, count(*)::int as count
        from roots r, jsonb_array_elements(case when jsonb_typeof(r.scores) = 'array' then r.scores end) e
        where jsonb_typeof(e->'score') = 'number' and e->>'name' is not null
        group by 1, r.bucket
      ) x) as scores,
      (select coalesce(json_agg(f order by f.start), '[]') from (
        select ${sql.unsafe(utc('r.bucket'))} as start, avg(r.feedback_score) as mean, count(*)::int as count
        from roots r where r.feedback_score is not null group by r.bucket
      ) f) as feedback`;
  return row;
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
