import type { EvalMetricCreate, EvalResult } from '@sightline/schemas';
import type { Sql } from './client';

// One member per metric type; a config sent as null or left out is stored as {}.
type Stored<M> = M extends { config?: infer C }
  ? Omit<M, 'config'> & { config: NonNullable<C>; id: number; version: number; created_at: Date; updated_at: Date }
  : never;
/** A stored metric: its config is as `EvalMetricCreateSchema` checked it for its type; `version` is its config's. */
export type EvalMetric = Stored<EvalMetricCreate>;

/** One version of a metric's config, as it was made. */
export type EvalMetricVersion = { version: number; type: string; config: Record<string, unknown>; created_at: Date };

const COLUMNS = 'id, name, type, config, version, created_at, updated_at';

/** Null when the organization already has a metric of that name. */
export async function createEvalMetric(
  sql: Sql,
  organizationId: string,
  m: { name: string; type: string; config: object },
): Promise<EvalMetric | null> {
  const [row] = await sql<EvalMetric[]>`
    with created as (
      insert into eval_metrics (organization_id, name, type, config) values (${organizationId}, ${m.name}, ${m.type}, ${sql.json(m.config as never)})
      on conflict (organization_id, name) do nothing
      returning ${sql.unsafe(COLUMNS)}
    ), first as (
      insert into eval_metric_versions (metric_id, organization_id, version, type, config, created_at)
      select id, ${organizationId}, version, type, config, created_at from created
    )
    select * from created`;
  return row ?? null;
}

/**
 * The metric with `config` as its next version, the versions before kept; as it was when `config` is
 * already its own (no version is added for nothing). Null when the organization has no such metric.
 */
export async function updateEvalMetric(
  sql: Sql,
  organizationId: string,
  id: number,
  config: object,
): Promise<EvalMetric | null> {
  const [row] = await sql<EvalMetric[]>`
    with changed as (
      update eval_metrics set config = ${sql.json(config as never)}, version = version + 1, updated_at = now()
      where organization_id = ${organizationId} and id = ${id} and config <> ${sql.json(config as never)}::jsonb
      returning ${sql.unsafe(COLUMNS)}
    ), added as (
      insert into eval_metric_versions (metric_id, organization_id, version, type, config, created_at)
      select id, ${organizationId}, version, type, config, updated_at from changed
    )
    select * from changed
    union all
    select ${sql.unsafe(COLUMNS)} from eval_metrics
    where organization_id = ${organizationId} and id = ${id} and not exists (select 1 from changed)`;
  return row ?? null;
}

/** A metric's versions, newest first; empty when the organization has no such metric. */
export function listEvalMetricVersions(sql: Sql, organizationId: string, id: number) {
  return sql<EvalMetricVersion[]>`
    select v.version, v.type, v.config, v.created_at
    from eval_metric_versions v
    where v.organization_id = ${organizationId} and v.metric_id = ${id}
    order by v.version desc`;
}

export function listEvalMetrics(sql: Sql, organizationId: string) {
  return sql<
    EvalMetric[]
  >`select ${sql.unsafe(COLUMNS)} from eval_metrics where organization_id = ${organizationId} order by id`;
}

export function findEvalMetrics(sql: Sql, organizationId: string, by: { names: string[] } | { ids: number[] }) {
  return 'names' in by
    ? sql<
        EvalMetric[]
      >`select ${sql.unsafe(COLUMNS)} from eval_metrics where organization_id = ${organizationId} and name = any(${sql.array(by.names)}::text[])`
    : sql<
        EvalMetric[]
      >`select ${sql.unsafe(COLUMNS)} from eval_metrics where organization_id = ${organizationId} and id = any(${sql.array(by.ids)}::bigint[])`;
}

export async function deleteEvalMetric(sql: Sql, organizationId: string, id: number): Promise<boolean> {
  return (
    (await sql`delete from eval_metrics where organization_id = ${organizationId} and id = ${id} returning 1`).length >
    0
  );
}

/** What an evaluation reads of a span. */
export async function findSpanForEval(sql: Sql, organizationId: string, traceId: string) {
  const [row] = await sql<
    {
      output: string | null;
      output_for_eval_metrics: string | null;
      target: string | null;
      inputs: Record<string, unknown> | null;
      project_id: string;
      root_trace_id: string;
    }[]
  >`
    select output, output_for_eval_metrics, target, inputs, project_id, root_trace_id
    from spans where organization_id = ${organizationId} and trace_id = ${traceId} and created`;
  return row ?? null;
}

/** The evaluation results stored on a span, by metric name; null when the organization has no such span. */
export async function spanEvalResults(
  sql: Sql,
  organizationId: string,
  traceId: string,
): Promise<Record<string, EvalResult> | null> {
  const [row] = await sql<{ eval_scores: Record<string, EvalResult> | null }[]>`
    select eval_scores from spans where organization_id = ${organizationId} and trace_id = ${traceId} and created`;
  return row ? (row.eval_scores ?? {}) : null;
}
