import type { Sql } from './client';

// A sample's test case: its inputs and target together. jsonb's text form is canonical (keys sorted, no
// insignificant spaces), so equal cases have equal keys whatever order a client wrote their keys in.
const CASE_KEY = 'md5(jsonb_build_array(r.inputs, to_jsonb(r.target))::text)';
const OUTPUT_CHARS = 10_000;
// A span's numeric scores by name: scores that are not numbers (and reasons, which can be long) stay behind.
const numericScores = (span: string) =>
  `(select jsonb_object_agg(e->>'name', e->'score') from jsonb_array_elements(case when jsonb_typeof(${span}.scores) = 'array' then ${span}.scores end) e
    where jsonb_typeof(e->'name') = 'string' and jsonb_typeof(e->'score') = 'number')`;

/**
 * Every sample (root trace) of the runs as the JSON text of `RunSample[]` (see @sightline/core): its case
 * key, its run (an index into `uuids`), numeric scores, latency and trace cost. One statement, and JSON text
 * rather than rows, so that the API's event loop only passes a string to the thread that parses it.
 *
 * A trace's cost is its total as the span writer stores it on the root (`trace_cost`, storeTraceTotals), which
 * the traces table shows too: summed here from each trace's spans, it was a probe of spans_by_root per sample,
 * which at ten million spans read pages mostly not in memory (docs/benchmarks-notes.md).
 */
export async function compareSamples(sql: Sql, organizationId: string, uuids: string[]): Promise<string> {
  const [{ samples }] = await sql<{ samples: string }[]>`
    select coalesce(json_agg(json_build_object(
      'key', ${sql.unsafe(CASE_KEY)}, 'run', array_position(${sql.array(uuids)}::uuid[], r.experiment_uuid) - 1,
      'latency', r.latency, 'cost', r.trace_cost,
      'scores', coalesce(${sql.unsafe(numericScores('r'))}, '{}')
    )), '[]')::text as samples
    from spans r
    where r.organization_id = ${organizationId} and r.experiment_uuid = any(${sql.array(uuids)}::uuid[])
      and r.created and r.depth = 0`;
  return samples;
}

/**
 * Cases where one run's value of a metric improved on the baseline's, regressed, or is the same: each
 * run's value of a case is the mean over its samples of it, as @sightline/core's compare counts them.
 */
type CaseOutcome = {
  run: string;
  baseline: string;
  kind: 'score' | 'latency' | 'cost';
  /** The score's name, for kind 'score'. */
  metric?: string | null;
  change: 'improved' | 'regressed' | 'unchanged';
};

function metricValue(sql: Sql, o: CaseOutcome) {
  if (o.kind === 'latency') return sql`r.latency::float8`;
  if (o.kind === 'cost') return sql`r.trace_cost`;
  return sql`(${sql.unsafe(numericScores('r'))} ->> ${o.metric ?? ''})::float8`;
}

/** The keys of the cases with the outcome, out of `s` (the samples with their key, run and value). */
function outcomeKeys(sql: Sql, uuids: string[], o: CaseOutcome) {
  const run = uuids.indexOf(o.run) + 1;
  const base = uuids.indexOf(o.baseline) + 1;
  // Scores are better higher, latency and cost lower (core's `better`).
  const better = o.kind === 'score' ? 1 : -1;
  const sign = o.change === 'improved' ? better : o.change === 'regressed' ? -better : 0;
  return sql`and key in (
    select key from (
      select key, avg(value) filter (where run = ${run}) as v, avg(value) filter (where run = ${base}) as b
      from s group by key
    ) o where sign(o.v - o.b) = ${sign})`;
}

/**
 * A page of the runs' cases, each with the earliest sample of every run (null where a run lacks the case),
 * ordered by the case's earliest start in any run, then key: `rows` is the JSON text of the page's rows.
 * `outcome` keeps the cases where a run improved on the baseline (or regressed, or stayed the same) by a
 * metric; `traceId` keeps the case of one sample (none when it is no sample of the runs).
 */
export async function compareRows(
  sql: Sql,
  q: {
    organizationId: string;
    uuids: string[];
    page: number;
    pageSize: number;
    outcome?: CaseOutcome | null;
    traceId?: string | null;
  },
): Promise<{ total: number; rows: string }> {
  const [{ total, rows }] = await sql<{ total: number; rows: string }[]>`
    with s as materialized (
      select ${sql.unsafe(CASE_KEY)} as key, array_position(${sql.array(q.uuids)}::uuid[], r.experiment_uuid) as run,
             coalesce(r.start_ts, r.created_at) as start, r.trace_id,
             ${q.outcome ? metricValue(sql, q.outcome) : sql`null::float8`} as value
      from spans r
      where r.organization_id = ${q.organizationId} and r.experiment_uuid = any(${sql.array(q.uuids)}::uuid[])
        and r.created and r.depth = 0
    ), cases as (
      select key, min(start) as start from s
      where true ${q.traceId ? sql`and key = (select key from s where trace_id = ${q.traceId})` : sql``}
        ${q.outcome ? outcomeKeys(sql, q.uuids, q.outcome) : sql``}
      group by key
    ), page as (
      select key, start, row_number() over (order by start, key) as n
      from cases order by start, key limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}
    ), firsts as (
      select distinct on (s.key, s.run) s.key, s.run, s.trace_id
      from s join page using (key) order by s.key, s.run, s.start, s.trace_id
    )
    select (select count(*) from cases)::int as total, coalesce((
      select json_agg(json_build_object('key', p.key, 'inputs', x.inputs, 'target', x.target, 'runs', cells.runs) order by p.n)
      from page p
      cross join lateral (
        select t.inputs, t.target from firsts f join spans t on t.organization_id = ${q.organizationId} and t.trace_id = f.trace_id
        where f.key = p.key limit 1
      ) x
      cross join lateral (
        select json_agg(case when t.trace_id is null then null else json_build_object(
          'trace_id', t.trace_id, 'output', left(t.output, ${OUTPUT_CHARS}), 'output_truncated', coalesce(length(t.output) > ${OUTPUT_CHARS}, false),
          'scores', coalesce((
            select jsonb_object_agg(e->>'name', case when jsonb_typeof(e->'score') = 'number' then e->'score' end)
            from jsonb_array_elements(case when jsonb_typeof(t.scores) = 'array' then t.scores end) e
            where jsonb_typeof(e->'name') = 'string'
          ), '{}'),
          'latency', t.latency, 'cost', t.trace_cost, 'status', t.status
        ) end order by g.run) as runs
        from generate_series(1, ${q.uuids.length}) g(run)
        left join firsts f on f.key = p.key and f.run = g.run
        left join spans t on t.organization_id = ${q.organizationId} and t.trace_id = f.trace_id
      ) cells
    ), '[]')::text as rows`;
  return { total, rows };
}
