import type { Sql } from './client';

export type AnnotationCriterion = {
  id: string;
  name: string;
  kind: 'score' | 'value';
  description: string | null;
  min: number | null;
  max: number | null;
  options: string[] | null;
  /** The evaluation metric that scores the same thing, for the judge's agreement with people. */
  eval_metric_name: string | null;
  created_at: Date;
};

const CRITERION = 'id, name, kind, description, min, max, options, eval_metric_name, created_at';

export function listCriteria(sql: Sql, organizationId: string) {
  return sql<
    AnnotationCriterion[]
  >`select ${sql.unsafe(CRITERION)} from annotation_criteria where organization_id = ${organizationId} order by name`;
}

export async function findCriterion(sql: Sql, organizationId: string, id: string): Promise<AnnotationCriterion | null> {
  const [row] = await sql<
    AnnotationCriterion[]
  >`select ${sql.unsafe(CRITERION)} from annotation_criteria where organization_id = ${organizationId} and id = ${id}`;
  return row ?? null;
}

/** Null when the organization already has a criterion of that name. */
export async function createCriterion(
  sql: Sql,
  organizationId: string,
  c: Omit<AnnotationCriterion, 'id' | 'created_at'>,
): Promise<AnnotationCriterion | null> {
  const [row] = await sql<AnnotationCriterion[]>`
    insert into annotation_criteria (organization_id, name, kind, description, min, max, options, eval_metric_name)
    values (${organizationId}, ${c.name}, ${c.kind}, ${c.description}, ${c.min}, ${c.max}, ${c.options && sql.array(c.options)},
      ${c.eval_metric_name})
    on conflict (organization_id, name) do nothing
    returning ${sql.unsafe(CRITERION)}`;
  return row ?? null;
}

/** Names (or, with null, forgets) the criterion's evaluation metric; null when there is no such criterion. */
export async function setCriterionMetric(
  sql: Sql,
  organizationId: string,
  id: string,
  evalMetricName: string | null,
): Promise<AnnotationCriterion | null> {
  const [row] = await sql<AnnotationCriterion[]>`
    update annotation_criteria set eval_metric_name = ${evalMetricName}
    where organization_id = ${organizationId} and id = ${id} returning ${sql.unsafe(CRITERION)}`;
  return row ?? null;
}

export async function deleteCriterion(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  return (
    (await sql`delete from annotation_criteria where organization_id = ${organizationId} and id = ${id} returning 1`)
      .length > 0
  );
}

/** What remarking on a span needs of it: its root, and the console's comments on it; null when unknown. */
export async function findSpanForRemarks(sql: Sql, organizationId: string, traceId: string) {
  const [row] = await sql<{ root_trace_id: string; comments: Record<string, { user_id: string }> | null }[]>`
    select root_trace_id, remarks->'comments' as comments from spans where organization_id = ${organizationId} and trace_id = ${traceId} and created`;
  return row ?? null;
}
