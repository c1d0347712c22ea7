import type { Sql } from './client';

export type RetentionResult = { spans: number; statements: number; cutoff: Date };

/**
 * Removes every trace whose first stored span is older than `days` (by `created_at`, set by PostgreSQL on
 * a span's first write, so a client's timestamps cannot keep data or age it early), at most `batchSize`
 * spans per statement, until none is left or `shouldStop` answers true.
 *
 * A trace goes whole: all its spans, however recent, with the oldest one. A trace is the spans that share
 * a root id, so children whose root never arrived (and rows that only ever got updates) go by the same
 * rule. Each statement takes whole traces in order of age; only a trace larger than what is left of the
 * batch is split across statements, its newest spans first, so that what remains of it still holds its
 * oldest span and is found again by the next statement, or by the next run if this one stops.
 */
export async function deleteExpiredTraces(
  sql: Sql,
  { days, batchSize, shouldStop = () => false }: { days: number; batchSize: number; shouldStop?: () => boolean },
): Promise<RetentionResult> {
  // One cutoff for the whole run, so that a run ends even while spans keep crossing it.
  const [{ cutoff }] = await sql<{ cutoff: Date }[]>`select now() - ${days}::float8 * interval '1 day' as cutoff`;
  let spans = 0;
  let statements = 0;
  while (!shouldStop()) {
    // Each step is bounded by an index: the oldest spans by created_at, each trace's spans by its root
    // (a lateral with a limit, so the planner cannot turn it into a scan of the table), the rows by ctid.
    const { count } = await sql`
      with oldest as (
        select organization_id, root_trace_id, created_at from spans
        where created_at < ${cutoff}
        order by created_at
        limit ${batchSize}
      ),
      expired as (
        select organization_id, root_trace_id, min(created_at) as first_at from oldest group by organization_id, root_trace_id
      ),
      victims as (
        select v.row_id
        from expired e cross join lateral (
          select s.ctid as row_id, s.created_at, s.trace_id from spans s
          where s.organization_id = e.organization_id and s.root_trace_id = e.root_trace_id
          order by s.created_at desc
          limit ${batchSize}
        ) v
        order by e.first_at, e.organization_id, e.root_trace_id, v.created_at desc, v.trace_id
        limit ${batchSize}
      )
      delete from spans where ctid = any(array(select row_id from victims))`;
    spans += count;
    statements++;
    // Fewer than a batch: every expired span was among those this statement found, and is gone with its trace.
    if (count < batchSize) break;
  }
  return { spans, statements, cutoff };
}
