// What the agreement figures are computed from: each annotation of a criterion on a span, with the score
// the criterion's evaluation metric gave the same span.
import type { Sql } from './client';

export type AnnotatedSpan = {
  trace_id: string;
  root_trace_id: string;
  project_uuid: string | null;
  user_id: string;
  score: number | null;
  value: string | null;
  /** The metric's score of the span, when it has one. */
  judge: number | null;
};

/**
 * Annotations of the criterion on spans first stored in [from, to), of one project when `projectId` is
 * given, at most `limit` spans' worth.
 */
export async function annotatedSpans(
  sql: Sql,
  organizationId: string,
  criterion: { id: string; eval_metric_name: string | null },
  range: { from: string; to: string; projectId?: string | null },
  limit = 100_000,
): Promise<AnnotatedSpan[]> {
  return sql<AnnotatedSpan[]>`
    select s.trace_id, s.root_trace_id, s.project_id as project_uuid, a.key as user_id,
      case when jsonb_typeof(a.value->'score') = 'number' then (a.value->>'score')::float8 end as score,
      a.value->>'value' as value,
      case when jsonb_typeof(s.eval_scores->${criterion.eval_metric_name ?? ''}->'score') = 'number'
        then (s.eval_scores->${criterion.eval_metric_name ?? ''}->>'score')::float8 end as judge
    from (
      select trace_id, root_trace_id, project_id, annotations, eval_scores from spans
      where organization_id = ${organizationId} and created and created_at >= ${range.from} and created_at < ${range.to}
        and annotations ? ${criterion.id} ${range.projectId ? sql`and project_id = ${range.projectId}` : sql``}
      limit ${limit}
    ) s cross join lateral jsonb_each(s.annotations->${criterion.id}) a
    order by s.trace_id, a.key`;
}
