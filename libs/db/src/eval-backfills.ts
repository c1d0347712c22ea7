// Backfills: a rule run over the stored traces of a time range, walked newest first a page at a time from a
// cursor kept in PostgreSQL, so that a worker restarting resumes where the last committed page ended.
import type { EvalResult, SpanEvent } from '@sightline/schemas';
import { feedQueue } from './annotation-queues';
import { transaction, type Sql } from './client';
import { claimRunsDone, requeueRuleRuns, ruleFilterSql, type RuleSettings, type StoredEvalRule } from './eval-rules';
import { EVAL_COLUMNS, foldEvalResults, lockEvalSpans, writeEvalColumns, type EvalColumns } from './eval-writes';

export type Backfill = {
  id: string;
  rule_id: string;
  organization_id: string;
  from_ts: Date;
  to_ts: Date;
  status: 'running' | 'done' | 'cancelled';
  total: number;
  done: number;
  cost: number;
  cursor_start_ts: Date | null;
  cursor_trace_id: string | null;
  created_at: Date;
  finished_at: Date | null;
};

// The roots a backfill walks: the project's production roots started in [from, to), on the spans_roots index.
const IN_RANGE = `s.organization_id = $1 and s.project_id = $2 and s.created and s.depth = 0 and s.experiment_uuid is null
  and s.start_ts >= $3 and s.start_ts < $4`;

/** A new backfill of the rule over [from, to), with the number of root traces the range holds. */
export async function createBackfill(
  sql: Sql,
  rule: Pick<StoredEvalRule, 'id' | 'organization_id' | 'project_id'>,
  from: string,
  to: string,
): Promise<Backfill> {
  const [row] = await sql.unsafe<Backfill[]>(
    `insert into eval_rule_backfills (rule_id, organization_id, from_ts, to_ts, total)
     select $5, $1, $3, $4, count(*) from spans s where ${IN_RANGE}
     returning *`,
    [rule.organization_id, rule.project_id, from, to, rule.id],
  );
  return row;
}

export async function findBackfill(sql: Sql, organizationId: string, id: string): Promise<Backfill | null> {
  const [row] = await sql<Backfill[]>`
    select * from eval_rule_backfills where organization_id = ${organizationId} and id = ${id}`;
  return row ?? null;
}

/** False when the backfill was not running (already done or cancelled). */
export async function cancelBackfill(sql: Sql, organizationId: string, id: string): Promise<boolean> {
  const rows = await sql`
    update eval_rule_backfills set status = 'cancelled', finished_at = now()
    where organization_id = ${organizationId} and id = ${id} and status = 'running' returning id`;
  return rows.length > 0;
}

/**
 * The next page of roots after the cursor, each with whether it has ended and matches the rule's filters
 * (a root walked still counts as done when it does not).
 */
export async function backfillPage(
  sql: Sql,
  backfill: Backfill,
  rule: Pick<StoredEvalRule, 'project_id' | 'filters'>,
  size: number,
): Promise<{ trace_id: string; start_ts: Date; eligible: boolean }[]> {
  const params: unknown[] = [
    backfill.organization_id,
    rule.project_id,
    backfill.from_ts,
    backfill.cursor_start_ts ?? backfill.to_ts,
  ];
  const filter = ruleFilterSql(rule.filters, params.length + 1);
  params.push(...filter.params);
  const after = backfill.cursor_trace_id
    ? `and (s.start_ts < $${params.push(backfill.cursor_start_ts)} or (s.start_ts = $${params.length} and s.trace_id < $${params.push(backfill.cursor_trace_id)}::uuid))`
    : '';
  // The cursor's own start time stays in range: roots that share it are told apart by their id.
  const range = backfill.cursor_trace_id ? IN_RANGE.replace('s.start_ts < $4', 's.start_ts <= $4') : IN_RANGE;
  return sql.unsafe(
    `select s.trace_id, s.start_ts, ((s.end_ts is not null or s.output is not null) and ${filter.text}) as eligible
     from spans s where ${range} ${after}
     order by s.start_ts desc nulls last, s.trace_id desc limit ${Number(size)}`,
    params as never[],
  );
}

/** What a metric reads of a span. */
export type EvalInputs = {
  output: string | null;
  output_for_eval_metrics: string | null;
  target: string | null;
  inputs: Record<string, unknown> | null;
};

type Run = { trace_id: string; root_trace_id: string; generation: number };

/**
 * A walked page of a rule without a judge, carried out in one transaction: the target spans locked, the
 * rule's runs on them claimed, the claimed spans read, scored by `score` and written (as applyEvalResults
 * writes), the rule's queue fed and the cursor moved past the page. A worker killed part way leaves none
 * of it done, and walks the page again. Its statements are pipelined: the lock, then the claim and the
 * read in one statement (which sees what was committed before the lock); the writes together.
 * A span whose results need the whole span writer (see foldEvalResults) cannot be written while these
 * locks are held: its run is left queued and answered, and the cursor left where it was, for the caller
 * to carry those runs out and then move the cursor.
 */
export async function scoreBackfillPage(
  sql: Sql,
  page: {
    backfill: Pick<Backfill, 'id'>;
    rule: Pick<RuleSettings, 'id' | 'organization_id' | 'reevaluate_on_update' | 'annotation_queue'>;
    spans: readonly { trace_id: string; root_trace_id: string }[];
    last: { trace_id: string; start_ts: Date };
    walked: number;
    /** The watermark the results are written at, taken before this reads the spans. */
    seq: number;
    score: (span: EvalInputs) => Record<string, EvalResult>;
  },
): Promise<Run[]> {
  const { rule, spans } = page;
  return transaction(sql, async (tx) => {
    const [, claimed] = await Promise.all([
      lockEvalSpans(
        tx,
        spans.map((s) => ({ organization_id: rule.organization_id, trace_id: s.trace_id })),
      ),
      tx<(EvalColumns & EvalInputs & Run)[]>`
        with claimed as (${claimRunsDone(tx, rule, spans)})
        select ${tx.unsafe(EVAL_COLUMNS)}, s.output, s.output_for_eval_metrics, s.target, s.inputs,
          c.root_trace_id, c.generation
        from claimed c join span_parts k on k.organization_id = c.organization_id and k.trace_id = c.trace_id
          join spans s on s.organization_id = k.organization_id and s.trace_id = k.trace_id and s.part_at = k.part_at`,
    ]);
    const results = claimed.map((span) => page.score(span));
    const events: SpanEvent[] = claimed.map((span, i) => ({
      kind: 'eval',
      organization_id: span.organization_id,
      trace_id: span.trace_id,
      seq: page.seq,
      fields: { eval_scores: results[i] },
    }));
    const { updates, whole } = foldEvalResults(claimed, events);
    const apart = new Set(whole.map((e) => e.trace_id));
    const left = claimed.filter((c) => apart.has(c.trace_id));
    const written = claimed
      .map((c, i) => ({ trace_id: c.trace_id, root_trace_id: c.root_trace_id, results: results[i] }))
      .filter((w) => !apart.has(w.trace_id));
    await Promise.all([
      writeEvalColumns(tx, updates),
      feedQueue(tx, rule.organization_id, rule.annotation_queue, written),
      left.length
        ? requeueRuleRuns(
            tx,
            rule.id,
            left.map((c) => c.trace_id),
          )
        : advanceBackfill(tx, page.backfill.id, page.last, page.walked),
    ]);
    return left.map(({ trace_id, root_trace_id, generation }) => ({ trace_id, root_trace_id, generation }));
  });
}

/** Moves the cursor past a walked page (and ends the backfill after its last), unless it was cancelled. */
export async function advanceBackfill(
  sql: Sql,
  id: string,
  last: { trace_id: string; start_ts: Date } | null,
  walked: number,
): Promise<void> {
  await (last
    ? sql`
        update eval_rule_backfills set cursor_start_ts = ${last.start_ts}, cursor_trace_id = ${last.trace_id},
          done = least(total, done + ${walked})
        where id = ${id} and status = 'running'`
    : sql`
        update eval_rule_backfills set status = 'done', finished_at = now(), done = total
        where id = ${id} and status = 'running'`);
}

/** Adds a judge call's cost, made for the backfill, to its spend. */
export async function addBackfillCost(sql: Sql, id: string, cost: number): Promise<void> {
  if (cost > 0) await sql`update eval_rule_backfills set cost = cost + ${cost} where id = ${id}`;
}

/** The target spans of a page of roots, with what a metric reads of them. */
export async function evalInputsOf(
  sql: Sql,
  organizationId: string,
  spanIds: string[],
): Promise<(EvalInputs & { trace_id: string })[]> {
  if (!spanIds.length) return [];
  return sql`
    select trace_id, output, output_for_eval_metrics, target, inputs from spans
    where organization_id = ${organizationId} and trace_id = any(${sql.array(spanIds)}::uuid[]) and created`;
}
