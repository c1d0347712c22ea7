import type { EvalMetricCreate, EvalResult } from '@sightline/schemas';
import type { Sql } from './client';

// One member per metric type; a config sent as null or left out is stored as {}.
type Stored<M> = M extends { config?: infer C }
  ? Omit<M, 'config'> & { config: NonNullable<C>; id: number; created_at: Date }
  : never;
/** A stored metric: its config is as `EvalMetricCreateSchema` checked it for its type. */
export type EvalMetric = Stored<EvalMetricCreate>;

/** Null when the organization already has a metric of that name. */
export async function createEvalMetric(
  sql: Sql,
  organizationId: string,
  m: { name: string; type: string; config: object },
): Promise<EvalMetric | null> {
  const [row] = await sql<EvalMetric[]>`
    insert into eval_metrics (organization_id, name, type, config) values (${organizationId}, ${m.name}, ${m.type}, ${sql.json(m.config as never)})
    on conflict (organization_id, name) do nothing
    returning id, name, type, config, created_at`;
  return row ?? null;
}

export function listEvalMetrics(sql: Sql, organizationId: string) {
  return sql<
    EvalMetric[]
  >`select id, name, type, config, created_at from eval_metrics where organization_id = ${organizationId} order by id`;
}

export function findEvalMetrics(sql: Sql, organizationId: string, by: { names: string[] } | { ids: number[] }) {
  return 'names' in by
    ? sql<
        EvalMetric[]
      >`select id, name, type, config, created_at from eval_metrics where organization_id = ${organizationId} and name = any(${sql.array(by.names)}::text[])`
    : sql<
        EvalMetric[]
      >`select id, name, type, config, created_at from eval_metrics where organization_id = ${organizationId} and id = any(${sql.array(by.ids)}::bigint[])`;
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

/** The evaluation results stored on a span, by metric name. */
export async function spanEvalResults(
  sql: Sql,
  organizationId: string,
  traceId: string,
): Promise<Record<string, EvalResult> | null> {
  const [row] = await sql<{ eval_scores: Record<string, EvalResult> | null }[]>`
    select eval_scores from spans where organization_id = ${organizationId} and trace_id = ${traceId} and created`;
  return row?.eval_scores ?? null;
}
