// Evaluation results written into their spans by a narrower path than applySpanEvents: an evaluation sets
// eval_scores alone, so only the columns it changes are read and written (scores, eval_scores, versions),
// under the same span locks. Rewriting whole rows (inputs, outputs, search words) cost a backfill five
// times what the update itself costs PostgreSQL.
import { foldEvents, withEvalResults } from '@sightline/core';
import type { SpanEvent } from '@sightline/schemas';
import { transaction, type Sql } from './client';
import { applySpanEvents, groupBySpan, idList, takeLocks } from './span-writes';

/**
 * What an evaluation's write reads of a span, under the span's lock. Of its versions, only the update
 * layer: an evaluation's fold moves nothing else (see foldEvents), so the create layer, most of the
 * column, is neither read nor sent back, but kept by the update itself.
 */
export type EvalColumns = {
  organization_id: string;
  trace_id: string;
  part: string;
  created: boolean;
  update_versions: Record<string, number> | null;
  scores: unknown;
  metadata: unknown;
  eval_scores: unknown;
};

/** The columns of EvalColumns, from a span `s` (in a statement that holds the span's lock). */
export const EVAL_COLUMNS = `s.organization_id, s.trace_id, s.part_at::text as part, s.created,
  s.versions -> 'update' as update_versions, s.scores, s.metadata, s.eval_scores`;

type EvalUpdate = Omit<EvalColumns, 'created' | 'metadata'>;

// A statement per partition, pruned once when planned (as the span writer reads its rows).
const UPDATE = `
  update spans s set eval_scores = u.eval_scores, scores = u.scores, updated_at = now(),
    versions = jsonb_build_object('create', coalesce(s.versions -> 'create', '{}'), 'update', u.update_versions)
  from jsonb_to_recordset($1::text::jsonb)
    as u(organization_id uuid, trace_id uuid, update_versions jsonb, eval_scores jsonb, scores jsonb)
  where s.part_at = $2::timestamptz and s.organization_id = u.organization_id and s.trace_id = u.trace_id`;

/** The span locks an evaluation's write holds; taken before its spans are read. */
export function lockEvalSpans(tx: Sql, spans: readonly { organization_id: string; trace_id: string }[]): Promise<void> {
  return takeLocks(
    tx,
    spans.map((s) => `span/${s.organization_id}/${s.trace_id}`),
  );
}

/**
 * The events folded into the spans read, as the columns to write; `whole` holds the events of a span
 * whose metadata the results change (an evaluation error shown, or one cleared: metadata is searched, so
 * its search words change too), or that is not stored as created yet: those go through applySpanEvents.
 */
export function foldEvalResults(
  stored: readonly EvalColumns[],
  events: readonly SpanEvent[],
): { updates: EvalUpdate[]; whole: SpanEvent[] } {
  const byKey = new Map(stored.map((r) => [`${r.organization_id}/${r.trace_id}`, r]));
  const updates: EvalUpdate[] = [];
  const whole: SpanEvent[] = [];
  for (const [key, list] of groupBySpan(events)) {
    const row = byKey.get(key);
    if (!row?.created) {
      whole.push(...list);
      continue;
    }
    const state = foldEvents(
      {
        created: true,
        versions: { create: {}, update: row.update_versions ?? {} },
        fields: { scores: row.scores, metadata: row.metadata, eval_scores: row.eval_scores ?? undefined },
      },
      [...list].sort((a, b) => a.seq - b.seq),
    );
    const derived = withEvalResults(state.fields);
    if (JSON.stringify(derived.metadata ?? null) !== JSON.stringify(row.metadata ?? null)) {
      whole.push(...list);
      continue;
    }
    updates.push({
      organization_id: row.organization_id,
      trace_id: row.trace_id,
      part: row.part,
      update_versions: state.versions.update,
      eval_scores: state.fields.eval_scores,
      scores: derived.scores,
    });
  }
  return { updates, whole };
}

/** Writes folded results, a statement per partition; the caller holds the spans' locks. */
export async function writeEvalColumns(tx: Sql, updates: readonly EvalUpdate[]): Promise<void> {
  for (const part of new Set(updates.map((u) => u.part))) {
    const rows = updates.filter((u) => u.part === part).map(({ part: _part, ...u }) => u);
    await tx.unsafe(UPDATE, [JSON.stringify(rows), part]);
  }
}

/** Writes `eval` events (eval_scores by metric name); see foldEvalResults for those written in whole. */
export async function applyEvalResults(sql: Sql, events: readonly SpanEvent[]): Promise<void> {
  const spans = [...groupBySpan(events).values()].map(([e]) => e);
  const whole = await transaction(sql, async (tx) => {
    await lockEvalSpans(tx, spans);
    const keys = spans.map((e) => ({ org: e.organization_id, id: e.trace_id }));
    const stored = await tx<EvalColumns[]>`
      select ${tx.unsafe(EVAL_COLUMNS)}
      from ${idList(tx, keys)} join span_parts k on k.organization_id = q.org and k.trace_id = q.id
        join spans s on s.organization_id = k.organization_id and s.trace_id = k.trace_id and s.part_at = k.part_at`;
    const folded = foldEvalResults(stored, events);
    await writeEvalColumns(tx, folded.updates);
    return folded.whole;
  });
  if (whole.length) await applySpanEvents(sql, whole);
}
