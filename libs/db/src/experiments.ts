import type { Experiment as WireExperiment, ExperimentList, PinnedStat } from '@sightline/schemas';
import { containsPattern } from '@sightline/core';
import type { Sql } from './client';

/** An experiment as stored: the wire shape, with its creation time as a Date. */
export type Experiment = Omit<WireExperiment, 'created_at'> & { created_at: Date };
export type RootStat = {
  trace_id: string;
  latency: number | null;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost: number;
  scores: unknown[];
};

const COLUMNS =
  'e.uuid, e.name, e.project_id as project_uuid, e.run_name, e.is_public, e.metadata, e.created_at, e.status, e.num_samples, e.pinned_stats';

/** Null when the run name is taken in the project. */
export async function createExperiment(
  sql: Sql,
  organizationId: string,
  e: { name: string; projectId: string; runName: string; isPublic: boolean; metadata: Record<string, unknown> },
): Promise<Experiment | null> {
  const [row] = await sql<Experiment[]>`
    insert into experiments as e (organization_id, project_id, name, run_name, is_public, metadata)
    values (${organizationId}, ${e.projectId}, ${e.name}, ${e.runName}, ${e.isPublic}, ${sql.json(e.metadata as never)})
    on conflict (project_id, run_name) do nothing
    returning ${sql.unsafe(COLUMNS)}`;
  return row ?? null;
}

export async function findExperiment(sql: Sql, organizationId: string, uuid: string): Promise<Experiment | null> {
  const [row] = await sql<
    Experiment[]
  >`select ${sql.unsafe(COLUMNS)} from experiments e where e.organization_id = ${organizationId} and e.uuid = ${uuid}`;
  return row ?? null;
}

export function listExperiments(sql: Sql, organizationId: string, f: ExperimentList) {
  return sql<Experiment[]>`
    select ${sql.unsafe(COLUMNS)} from experiments e
    ${f.project_name ? sql`join projects p on p.id = e.project_id and p.name = ${f.project_name}` : sql``}
    where e.organization_id = ${organizationId}
      ${f.project_uuid ? sql`and e.project_id = ${f.project_uuid}` : sql``}
      ${f.metadata_filter ? sql`and e.metadata @> ${sql.json(f.metadata_filter as never)}` : sql``}
      ${f.experiment_name_filter ? sql`and e.name ilike ${containsPattern(f.experiment_name_filter)}` : sql``}
      ${f.run_name_filter ? sql`and e.run_name ilike ${containsPattern(f.run_name_filter)}` : sql``}
      ${f.experiment_uuids ? sql`and e.uuid = any(${sql.array(f.experiment_uuids)}::uuid[])` : sql``}
    order by e.created_at desc`;
}

/** How many samples (root traces) each of these experiments holds now, finished or not. */
export async function sampleCounts(sql: Sql, organizationId: string, uuids: string[]): Promise<Map<string, number>> {
  if (!uuids.length) return new Map();
  const rows = await sql<{ uuid: string; samples: number }[]>`
    select s.experiment_uuid as uuid, count(*)::int as samples from spans s
    where s.organization_id = ${organizationId} and s.experiment_uuid = any(${sql.array(uuids)}::uuid[])
      and s.created and s.depth = 0
    group by 1`;
  return new Map(rows.map((r) => [r.uuid, r.samples]));
}

export type ScoreSummary = {
  name: string;
  count: number;
  mean: number;
  median: number;
  standard_deviation: number | null;
  min: number;
  max: number;
};

/** Each numeric score of the experiment's samples summarized: mean, median, sample standard deviation, range. */
export function scoreSummaries(sql: Sql, organizationId: string, uuid: string) {
  return sql<ScoreSummary[]>`
    select e->>'name' as name, count(*)::int as count, avg((e->>'score')::float8) as mean,
      percentile_cont(0.5) within group (order by (e->>'score')::float8) as median,
      stddev_samp((e->>'score')::float8) as standard_deviation,
      min((e->>'score')::float8) as min, max((e->>'score')::float8) as max
    from spans s, jsonb_array_elements(case when jsonb_typeof(s.scores) = 'array' then s.scores end) e
    where s.organization_id = ${organizationId} and s.experiment_uuid = ${uuid} and s.created and s.depth = 0
      and jsonb_typeof(e->'score') = 'number' and e->>'name' is not null
    group by 1 order by 1`;
}

/** An experiment becomes running when the first trace log tagged with it is written. */
export async function markExperimentsRunning(sql: Sql, pairs: { org: string; experiment: string }[]): Promise<void> {
  if (!pairs.length) return;
  await sql`
    update experiments e set status = 'running'
    from unnest(${sql.array(pairs.map((p) => p.org))}::uuid[], ${sql.array(pairs.map((p) => p.experiment))}::uuid[]) as t(org, experiment)
    where e.organization_id = t.org and e.uuid = t.experiment and e.status = 'pending'`;
}

/**
 * One row per root trace log of the experiment, in pages: latency and scores are the root's; tokens and
 * cost are summed over its whole trace, where the LLM calls usually are. Each page is its own short
 * query (keyset on trace_id), so a slow reader never holds a database connection between pages.
 */
export async function* rootStats(
  sql: Sql,
  organizationId: string,
  uuid: string,
  pageSize = 5000,
): AsyncGenerator<RootStat[]> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const page = await sql<RootStat[]>`
      select r.trace_id, r.latency, t.input_tokens, t.output_tokens, t.total_tokens, t.cost, coalesce(r.scores, '[]') as scores
      from spans r
      cross join lateral (
        select coalesce(sum(s.input_tokens), 0)::bigint as input_tokens, coalesce(sum(s.output_tokens), 0)::bigint as output_tokens,
               coalesce(sum(s.total_tokens), 0)::bigint as total_tokens, coalesce(sum(s.cost), 0)::float8 as cost
        from spans s where s.organization_id = r.organization_id and s.root_trace_id = r.trace_id and s.part_at = r.part_at
          and s.created
      ) t
      where r.organization_id = ${organizationId} and r.experiment_uuid = ${uuid} and r.trace_id > ${after} and r.created and r.depth = 0
      order by r.trace_id
      limit ${pageSize}`;
    if (page.length) yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1].trace_id;
  }
}

/** Stores a finish unless a later one (by sequence number) is already stored; false when it was not. */
export async function finishExperiment(
  sql: Sql,
  organizationId: string,
  uuid: string,
  result: {
    seq: number;
    status: string;
    pinnedStats: PinnedStat[];
    numSamples: number;
    metadata: Record<string, unknown>;
  },
): Promise<boolean> {
  const rows = await sql`
    update experiments set status = ${result.status}, pinned_stats = ${sql.json(result.pinnedStats as never)}, num_samples = ${result.numSamples},
      metadata = metadata || ${sql.json(result.metadata as never)}, finished_at = now(), finish_seq = ${result.seq}
    where organization_id = ${organizationId} and uuid = ${uuid} and (finish_seq is null or finish_seq < ${result.seq})
    returning 1`;
  return rows.length > 0;
}
