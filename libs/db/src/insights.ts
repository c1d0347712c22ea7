import type { FilterInput } from '@sightline/core';
import type { Sql } from './client';
import { narrowEnough, rootConditions } from './root-listing';
import { searchPlanOf, type SearchPlan } from './search';
import { traceStart } from './trace-start';
import { traceTotal } from './trace-total';

// Aggregates for the console's dashboard and its sessions and users pages. A trace's tokens and cost are
// counted as everywhere in the console: the root's own value when the client set one there, else the sum
// over the trace's spans (trace-total.ts), so that the dashboard adds up to the traces table. They count
// production traffic alone: traces logged by an experiment run are left out, as the traces page leaves them
// (the dashboard takes them in when asked, as the traces page does).

const utc = (e: string) => `to_char(${e} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

/**
 * The dashboard's window over a project's roots: its time and buckets, and which roots it takes as the
 * traces listing chooses them (rootConditions): production's alone unless `includeExperiments`, every
 * filter of `filters`, of the `status` and holding the `search`'s words.
 */
export type Window = {
  organizationId: string;
  projectId: string;
  from: Date;
  to: Date;
  bucketSeconds: number;
  includeExperiments?: boolean;
  filters?: readonly FilterInput[];
  status?: string | null;
  search?: string | null;
};

type Figures = {
  traces: number;
  errors: number;
  latency_p50: number | null;
  latency_p95: number | null;
  latency_p99: number | null;
  input_tokens: number;
  output_tokens: number;
  cost: number;
};
type ModelCost = { model: string; calls: number; cost: number };
export type Dashboard = {
  buckets: (Figures & { start: string })[];
  totals: Figures;
  models: ModelCost[];
  /** The cost and calls of each of `models`, bucket by bucket (a bucket without a call left out). */
  modelBuckets: (ModelCost & { start: string })[];
  scores: { name: string; start: string; mean: number; count: number }[];
  feedback: { start: string; mean: number; count: number }[];
  /** Whether the latency percentiles were read from hourly histograms: each within 1% of the exact one. */
  latencyApproximate: boolean;
};

type RootFigures = Omit<Dashboard, 'models' | 'modelBuckets' | 'latencyApproximate'> & {
  models: (ModelCost & { start: string })[];
};

/** The models the dashboard lists, costliest first. */
const MODELS_SHOWN = 20;
const HOUR_MS = 3_600_000;

/**
 * Every figure of the dashboard: per bucket and in total, traces, errors, latency percentiles, tokens and
 * cost; cost and calls by model (over the spans with a model), in total and per bucket; the mean of each
 * score of the roots and of their feedback, per bucket. Throws FilterError for a bad filter, SearchError
 * for a search of no word the index knows.
 *
 * Buckets of whole hours start on the hour. A window of such buckets that no filter or search narrows is read
 * from the hours' sums (hourlyFigures): the same counts and sums, and latency percentiles from histograms.
 * Otherwise one statement reads the window's roots once (rootFigures).
 */
export async function dashboard(sql: Sql, w: Window): Promise<Dashboard> {
  // The window's whole hours, between its first and last part hours.
  const inner = { from: ceilHour(w.from), to: floorHour(w.to) };
  const hourly = w.bucketSeconds % 3600 === 0 && !w.filters?.length && !w.status && !w.search && inner.from < inner.to;
  const { models: byBucket, ...figures } = hourly ? await hourlyFigures(sql, w, inner) : await rootFigures(sql, w);
  const models = new Map<string, ModelCost>();
  for (const m of byBucket) {
    const sum = models.get(m.model) ?? { model: m.model, calls: 0, cost: 0 };
    models.set(m.model, { model: m.model, calls: sum.calls + m.calls, cost: sum.cost + m.cost });
  }
  const shown = [...models.values()].sort((a, b) => b.cost - a.cost || b.calls - a.calls).slice(0, MODELS_SHOWN);
  const names = new Set(shown.map((m) => m.model));
  return {
    ...figures,
    models: shown,
    modelBuckets: byBucket
      .filter((m) => names.has(m.model))
      .sort((a, b) => a.start.localeCompare(b.start) || a.model.localeCompare(b.model)),
    latencyApproximate: hourly,
  };
}

const ceilHour = (d: Date) => new Date(Math.ceil(d.getTime() / HOUR_MS) * HOUR_MS);
const floorHour = (d: Date) => new Date(Math.floor(d.getTime() / HOUR_MS) * HOUR_MS);

/** Where the window's buckets start: on the hour before `from` when they are whole hours, else at `from`. */
const bucketOrigin = (w: Window) => (w.bucketSeconds % 3600 === 0 ? floorHour(w.from) : w.from);

/**
 * The window's roots as a condition on `s`, spans or their narrow copy trace_roots (when no search needs the
 * spans' words): those the listing would choose (rootConditions), by their start as the listing shows it
 * (traceStart), starting in any of `ranges`; `bucketOf` places a time in the window's buckets.
 */
function windowRoots(w: Window, ranges: { from: Date; to: Date }[], searchPlan?: SearchPlan) {
  const selection = {
    organizationId: w.organizationId,
    projectId: w.projectId,
    includeExperiments: w.includeExperiments ?? false,
    filters: w.filters,
    status: w.status,
    search: w.search,
    searchPlan,
  };
  const source = narrowEnough(selection) ? 'trace_roots' : 'spans';
  const { conditions, searching, params } = rootConditions(selection, source);
  const inRange = ranges.map((r) => {
    const from = `$${params.push(r.from.toISOString())}::timestamptz`;
    const to = `$${params.push(r.to.toISOString())}::timestamptz`;
    return `(s.start_ts >= ${from} and s.start_ts < ${to}) or (s.start_ts is null and s.created_at >= ${from} and s.created_at < ${to})`;
  });
  conditions.push(`(${inRange.join(' or ')})`);
  const bucket = `$${params.push(`${w.bucketSeconds} seconds`)}::interval`;
  const origin = `$${params.push(bucketOrigin(w).toISOString())}::timestamptz`;
  return {
    source,
    where: [...conditions, ...searching].join(' and '),
    params,
    bucketOf: (time: string) => `date_bin(${bucket}, ${time}, ${origin})`,
  };
}

/**
 * Traces, errors, latency, tokens and cost, scores and feedback: per bucket and in total; calls and cost by
 * model, per bucket; from the window's roots, read once. Each root holds its trace's tokens, cost and calls by
 * model (stored by the span writer, trace-total.ts), as the traces table counts them.
 */
async function rootFigures(sql: Sql, w: Window): Promise<RootFigures> {
  // As the listing searches: common words root by root, rare ones through the index. Either way every root
  // of the window is tested (a walk's bound is the listing's, for a page), so the count is exact.
  const plan = w.search ? await searchPlanOf(sql, w.search, 0) : undefined;
  const roots = windowRoots(w, [w], plan);
  const [figures] = await sql.unsafe<RootFigures[]>(rootFiguresSql(roots), roots.params as never[]);
  return figures;
}

function rootFiguresSql(roots: ReturnType<typeof windowRoots>) {
  const stats = `
    count(*)::int as traces, count(*) filter (where r.status = 'error')::int as errors,
    percentile_cont(0.5) within group (order by r.latency) as latency_p50,
    percentile_cont(0.95) within group (order by r.latency) as latency_p95,
    percentile_cont(0.99) within group (order by r.latency) as latency_p99`;
  const sums = `coalesce(sum(r.trace_input_tokens), 0)::float8 as input_tokens,
    coalesce(sum(r.trace_output_tokens), 0)::float8 as output_tokens, coalesce(sum(r.trace_cost), 0)::float8 as cost`;
  return `
    with roots as materialized (
      select s.status, s.latency, s.scores, s.feedback_score, s.trace_input_tokens, s.trace_output_tokens,
        s.trace_cost, s.trace_models, ${roots.bucketOf(traceStart('s'))} as bucket
      from ${roots.source} s where ${roots.where}
    )
    select
      (select coalesce(json_agg(b order by b.start), '[]') from (
        select ${utc('r.bucket')} as start, ${stats},
          ${sums}
        from roots r group by r.bucket
      ) b) as buckets,
      (select row_to_json(a) from (select ${stats}, ${sums} from roots r) a) as totals,
      (select coalesce(json_agg(x order by x.name, x.start), '[]') from (
        select e->>'name' as name, ${utc('r.bucket')} as start, avg((e->>'score')::float8) as mean, count(*)::int as count
        from roots r, jsonb_array_elements(case when jsonb_typeof(r.scores) = 'array' then r.scores end) e
        where jsonb_typeof(e->'score') = 'number' and e->>'name' is not null
        group by 1, r.bucket
      ) x) as scores,
      (select coalesce(json_agg(f order by f.start), '[]') from (
        select ${utc('r.bucket')} as start, avg(r.feedback_score) as mean, count(*)::int as count
        from roots r where r.feedback_score is not null group by r.bucket
      ) f) as feedback,
      (select coalesce(json_agg(m), '[]') from (
        select ${utc('r.bucket')} as start, m.model, sum(m.calls)::int as calls, coalesce(sum(m.cost), 0)::float8 as cost
        from roots r,
          jsonb_to_recordset(case when jsonb_typeof(r.trace_models) = 'array' then r.trace_models end)
            as m(model text, calls int, cost float8)
        where m.model is not null
        group by r.bucket, m.model
      ) m) as models`;
}

/** The figures of the root `row` (of trace_roots, or a change of one) as trace_hour_figures (migration 00033) counts them. */
const figuresOf = (row: string) =>
  `trace_hour_figures(${row}.status, ${row}.latency, ${row}.trace_input_tokens, ${row}.trace_output_tokens,
    ${row}.trace_cost, ${row}.feedback_score, ${row}.scores, ${row}.trace_models)`;

/**
 * The same figures as rootFigures, from the sums of the window's whole hours `inner` (trace_hours and the
 * changes not folded into it yet) and the roots of its first and last part hours. Latency percentiles are
 * read from the hours' histograms (trace_latency_bucket), each within 1% of the exact one.
 */
async function hourlyFigures(sql: Sql, w: Window, inner: { from: Date; to: Date }): Promise<RootFigures> {
  const edges = [
    { from: w.from, to: inner.from },
    { from: inner.to, to: w.to },
  ];
  const roots = windowRoots(w, edges);
  const p = roots.params;
  const hours = `h.organization_id = $1 and h.project_id = $2::uuid
    and h.hour >= $${p.push(inner.from.toISOString())}::timestamptz and h.hour < $${p.push(inner.to.toISOString())}::timestamptz
    ${w.includeExperiments ? '' : 'and not h.experiment'}`;
  const rows = await sql.unsafe<{ start: string; figure: string; key: string; n: number; total: number }[]>(
    `
    with figures as (
      select h.hour as time, h.figure, h.key, h.n, h.total from trace_hours h where ${hours}
      union all
      select h.hour, f.figure, f.key, h.sign * f.n, h.sign * f.total
      from trace_hour_changes h, lateral ${figuresOf('h')} f where ${hours}
      union all
      select ${traceStart('s')}, f.figure, f.key, f.n, f.total from trace_roots s, lateral ${figuresOf('s')} f
      where ${roots.where}
    )
    select ${utc(roots.bucketOf('time'))} as start, figure, key, sum(n)::float8 as n, sum(total)::float8 as total
    from figures group by 1, 2, 3 having sum(n) <> 0`,
    p as never[],
  );
  return figuresOfSums(rows);
}

type Sum = { start: string; figure: string; key: string; n: number; total: number };

/** rootFigures' answer from the sums of each bucket's figures (trace_hour_figures). */
function figuresOfSums(rows: Sum[]): RootFigures {
  const byStart = new Map<string, Sum[]>();
  for (const r of rows) {
    if (!byStart.has(r.start)) byStart.set(r.start, []);
    byStart.get(r.start)!.push(r);
  }
  const figures = (sums: Sum[]): Figures => {
    const of = (figure: string) => sums.filter((r) => r.figure === figure);
    const count = (figure: string) => of(figure).reduce((t, r) => t + r.n, 0);
    const total = (figure: string) => of(figure).reduce((t, r) => t + r.total, 0);
    const latency = of('latency');
    return {
      traces: count('traces'),
      errors: count('errors'),
      latency_p50: percentile(latency, 0.5),
      latency_p95: percentile(latency, 0.95),
      latency_p99: percentile(latency, 0.99),
      input_tokens: total('input_tokens'),
      output_tokens: total('output_tokens'),
      cost: total('cost'),
    };
  };
  const byKey = (figure: string) =>
    rows
      .filter((r) => r.figure === figure)
      .sort((a, b) => a.key.localeCompare(b.key) || a.start.localeCompare(b.start));
  return {
    buckets: [...byStart.keys()]
      .filter((start) => byStart.get(start)!.some((r) => r.figure === 'traces'))
      .sort()
      .map((start) => ({ start, ...figures(byStart.get(start)!) })),
    totals: figures(rows),
    scores: byKey('score').map((r) => ({ name: r.key, start: r.start, mean: r.total / r.n, count: r.n })),
    feedback: byKey('feedback').map((r) => ({ start: r.start, mean: r.total / r.n, count: r.n })),
    models: byKey('model').map((r) => ({ start: r.start, model: r.key, calls: r.n, cost: r.total })),
  };
}

/** The latency a histogram bucket stands for: its geometric middle (trace_latency_bucket). */
const latencyOf = (bucket: number) => (bucket === -1_000_000 ? 0 : 1.02 ** (bucket + 0.5));

/** percentile_cont of the latencies a histogram counts, each at its bucket's latency; null when it is empty. */
function percentile(histogram: Sum[], q: number): number | null {
  const sorted = histogram.map((r) => ({ at: Number(r.key), n: r.n })).sort((a, b) => a.at - b.at);
  const n = sorted.reduce((t, b) => t + b.n, 0);
  if (!n) return null;
  const nth = (i: number) => {
    let seen = 0;
    for (const b of sorted) if ((seen += b.n) > i) return latencyOf(b.at);
    return latencyOf(sorted.at(-1)!.at);
  };
  const at = q * (n - 1);
  const low = nth(Math.floor(at));
  return low + (at - Math.floor(at)) * (nth(Math.ceil(at)) - low);
}

export type GroupBy = 'session_id' | 'end_user_identifier';

type GroupsQuery = {
  organizationId: string;
  projectId: string;
  by: GroupBy;
  since: Date | null;
  search?: string | null;
  page: number;
  pageSize: number;
};

/**
 * The project's traces grouped by session or by user, most recently active first, with the number of groups
 * as `total` on each row. All time is read from each group's sums (trace_groups, migration 00034), a time
 * range from the window's roots.
 */
export function traceGroups(sql: Sql, q: GroupsQuery) {
  return q.since ? groupsOfRoots(sql, q) : groupsOfSums(sql, q);
}

const likeOf = (search: string) => `%${search.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * A page of groups from trace_groups, walked in the order of the page and stopped after it, whatever the
 * number of groups. The groups with changes not folded yet are counted from their folded sums and those
 * changes, with their first and last start read from the roots (trace_group_bounds), so that a trace shows
 * in its group as soon as it is written.
 */
function groupsOfSums(sql: Sql, q: GroupsQuery) {
  const own = sql`organization_id = ${q.organizationId} and project_id = ${q.projectId} and grouped_by = ${q.by}`;
  const search = q.search ? sql`and key ilike ${likeOf(q.search)}` : sql``;
  return sql<Record<string, unknown>[]>`
    with pending as (
      select key, sum(traces) as traces, sum(errors) as errors, sum(latency_n) as latency_n,
        sum(latency_sum) as latency_sum, sum(cost) as cost, sum(feedback_n) as feedback_n,
        sum(feedback_sum) as feedback_sum
      from trace_group_changes where ${own} ${search}
      group by key
    ),
    changed as (
      select p.key, coalesce(g.traces, 0) + p.traces as traces, coalesce(g.errors, 0) + p.errors as errors,
        coalesce(g.latency_n, 0) + p.latency_n as latency_n, coalesce(g.latency_sum, 0) + p.latency_sum as latency_sum,
        coalesce(g.cost, 0) + p.cost as cost, coalesce(g.feedback_n, 0) + p.feedback_n as feedback_n,
        coalesce(g.feedback_sum, 0) + p.feedback_sum as feedback_sum, b.first_start, b.last_start
      from pending p
        left join trace_groups g on g.organization_id = ${q.organizationId} and g.project_id = ${q.projectId}
          and g.grouped_by = ${q.by} and g.key = p.key,
        lateral trace_group_bounds(${q.organizationId}, ${q.projectId}, ${q.by}, p.key) b
    ),
    -- The groups without pending changes. Without a search, the page walks them in its order on trace_groups'
    -- index and stops at its end, and the count reads that index apart. A search reads every key, once (one
    -- scan for the page and the count). The fold deletes a group left without traces in the transaction that
    -- empties it, so every row there is a group.
    settled as ${q.search ? sql`materialized` : sql`not materialized`} (
      select key, traces, errors, latency_n, latency_sum, cost, feedback_n, feedback_sum, first_start, last_start
      from trace_groups g
      where ${own} ${search} and not exists (
        select from trace_group_changes c where c.organization_id = g.organization_id
          and c.project_id = g.project_id and c.grouped_by = g.grouped_by and c.key = g.key)
    ),
    page as (
      select * from (
        (select * from settled order by last_start desc, key limit ${q.page * q.pageSize})
        union all
        select key, traces, errors, latency_n, latency_sum, cost, feedback_n, feedback_sum, first_start, last_start
        from changed where traces > 0
      ) groups
      order by last_start desc, key
      limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}
    )
    select key, traces::int,
      ((select count(*) from settled) + (select count(*) from changed where traces > 0))::int as total,
      ${sql.unsafe(utc('first_start'))} as first_start, ${sql.unsafe(utc('last_start'))} as last_start,
      errors::int, (latency_sum / nullif(latency_n, 0))::float8 as latency_avg, cost::float8 as cost,
      (feedback_sum / nullif(feedback_n, 0))::float8 as feedback_mean
    from page order by page.last_start desc, key`;
}

/** A page of groups of the roots started since `q.since`, grouped as they are read (trace_roots). */
function groupsOfRoots(sql: Sql, q: GroupsQuery) {
  const key = q.by === 'session_id' ? sql`s.session_id` : sql`s.end_user_identifier`;
  const start = traceStart('s');
  return sql<Record<string, unknown>[]>`
    select ${key} as key, count(*)::int as traces, count(*) over ()::int as total,
      ${sql.unsafe(utc(`min(${start})`))} as first_start, ${sql.unsafe(utc(`max(${start})`))} as last_start,
      count(*) filter (where s.status = 'error')::int as errors, avg(s.latency) as latency_avg,
      coalesce(sum(s.trace_cost), 0)::float8 as cost, avg(s.feedback_score) as feedback_mean
    from trace_roots s
    where s.organization_id = ${q.organizationId} and s.project_id = ${q.projectId}
      and s.experiment_uuid is null and ${key} is not null
      and (s.start_ts >= ${q.since} or (s.start_ts is null and s.created_at >= ${q.since}))
      ${q.search ? sql`and ${key} ilike ${likeOf(q.search)}` : sql``}
    group by 1 order by max(${sql.unsafe(start)}) desc, 1
    limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}`;
}

/** One session's (or user's) traces in the order they happened, with what was said in each. */
export async function tracesOfGroup(
  sql: Sql,
  q: { organizationId: string; projectId: string; by: GroupBy; key: string; since?: Date | null },
): Promise<string> {
  const key = q.by === 'session_id' ? sql`s.session_id` : sql`s.end_user_identifier`;
  const [{ traces }] = await sql<{ traces: string }[]>`
    select coalesce(json_agg(json_build_object(
      'trace_id', s.trace_id, 'trace_name', s.trace_name, 'start_timestamp', ${sql.unsafe(utc(traceStart('s')))},
      'latency', s.latency, 'status', s.status, 'error', s.error, 'inputs', s.inputs, 'output', s.output,
      'cost', ${sql.unsafe(traceTotal('s', 'cost'))}, 'feedback_score', s.feedback_score, 'end_user_identifier', s.end_user_identifier,
      'session_id', s.session_id
    ) order by ${sql.unsafe(traceStart('s'))}, s.trace_id), '[]')::text as traces
    from spans s
    where s.organization_id = ${q.organizationId} and s.project_id = ${q.projectId} and s.created and s.depth = 0
      and s.experiment_uuid is null and ${key} = ${q.key}
      ${q.since ? sql`and (s.start_ts >= ${q.since} or (s.start_ts is null and s.created_at >= ${q.since}))` : sql``}`;
  return traces;
}
