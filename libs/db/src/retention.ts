import type { Sql } from './client';
import { dropExpiredPartitions, ensureSpanPartitions } from './partitions';

export type RetentionResult = { partitions: string[]; spans: number; statements: number; cutoff: Date };

/**
 * Removes every trace first stored more than `days` ago (by PostgreSQL's clock on the trace's first write,
 * so a client's timestamps cannot keep data or age it early), and makes the partitions of the days ahead.
 *
 * A trace goes whole: all its spans, however recent, with the oldest one, since a trace lives in the
 * partition of the day its first span was stored. A daily partition is dropped once all of that day has
 * expired, so a trace is kept between `days` and `days` + 1 day. The spans stored before partitioning go
 * row by row (`deleteExpiredLegacyTraces`).
 */
export async function deleteExpiredTraces(
  sql: Sql,
  { days, batchSize, shouldStop = () => false }: { days: number; batchSize: number; shouldStop?: () => boolean },
): Promise<RetentionResult> {
  await ensureSpanPartitions(sql);
  // One cutoff for the whole run, so that a run ends even while spans keep crossing it.
  const [{ cutoff }] = await sql<{ cutoff: Date }[]>`select now() - ${days}::float8 * interval '1 day' as cutoff`;
  const partitions = await dropExpiredPartitions(sql, { cutoff, batchSize, shouldStop });
  const legacy = await deleteExpiredLegacyTraces(sql, { cutoff, batchSize, shouldStop });
  return { partitions, ...legacy, cutoff };
}

/**
 * Removes the traces stored before partitioning (partition `spans_legacy`) whose first stored span is older
 * than `cutoff` (by `created_at`), at most `batchSize` spans per statement, with their keys, until none is
 * left or `shouldStop` answers true.
 *
 * A trace is the spans that share a root id, so children whose root never arrived (and rows that only
 * ever got updates) go by the same rule. Each statement takes whole traces in order of age; only a trace
 * larger than what is left of the batch is split across statements, its newest spans first, so that what
 * remains of it still holds its oldest span and is found again by the next statement, or by the next run
 * if this one stops.
 */
async function deleteExpiredLegacyTraces(
  sql: Sql,
  { cutoff, batchSize, shouldStop }: { cutoff: Date; batchSize: number; shouldStop: () => boolean },
): Promise<{ spans: number; statements: number }> {
  let spans = 0;
  let statements = 0;
  while (!shouldStop()) {
    // Each step is bounded by an index: the oldest spans by created_at, each trace's spans by its root
    // (a lateral with a limit, so the planner cannot turn it into a scan of the table), the rows by ctid.
    const [{ count }] = await sql<{ count: number }[]>`
      with oldest as (
        select organization_id, root_trace_id, created_at from spans_legacy
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
          select s.ctid as row_id, s.created_at, s.trace_id from spans_legacy s
          where s.organization_id = e.organization_id and s.root_trace_id = e.root_trace_id
          order by s.created_at desc
          limit ${batchSize}
        ) v
        order by e.first_at, e.organization_id, e.root_trace_id, v.created_at desc, v.trace_id
        limit ${batchSize}
      ),
      gone as (
        delete from spans_legacy where ctid = any(array(select row_id from victims))
        returning organization_id, trace_id, root_trace_id
      ),
      -- Their keys, and their traces' once no span of the trace is left (a root that never arrived has one).
      forgotten as (
        delete from span_parts k using (
          select organization_id, trace_id from gone
          union
          select g.organization_id, g.root_trace_id from gone g
          where not exists (
            select from spans_legacy s
            where s.organization_id = g.organization_id and s.root_trace_id = g.root_trace_id
              and s.ctid <> all(array(select row_id from victims)))
        ) g
        where k.organization_id = g.organization_id and k.trace_id = g.trace_id and k.part_at = '-infinity'
      )
      select count(*)::int as count from gone`;
    spans += count;
    statements++;
    // Fewer than a batch: every expired span was among those this statement found, and is gone with its trace.
    if (count < batchSize) break;
  }
  return { spans, statements };
}
