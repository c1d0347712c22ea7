// Evaluation results written into their spans by a narrower path than applySpanEvents: an evaluation sets
// eval_scores alone, so only the columns it changes are read and written (scores, eval_scores, versions),
// under the same span locks. Rewriting whole rows (inputs, outputs, search words) cost a backfill five
// times what the update itself costs PostgreSQL.
import { foldEvents, withEvalResults } from '@sightline/core';
import type { SpanEvent } from '@sightline/schemas';
import { transaction, type Sql } from './client';
import { applySpanEvents, groupBySpan, idList, takeLocks } from './span-writes';

type Stored = {
  organization_id: string;
  trace_id: string;
  part: string;
  created: boolean;
  versions: { create?: Record<string, number>; update?: Record<string, number> };
  scores: unknown;
  metadata: unknown;
  eval_scores: unknown;
};

// A statement per partition, pruned once when planned (as the span writer reads its rows).
const UPDATE = `
  update spans s set versions = u.versions, eval_scores = u.eval_scores, scores = u.scores, updated_at = now()
  from jsonb_to_recordset($1::text::jsonb)
    as u(organization_id uuid, trace_id uuid, versions jsonb, eval_scores jsonb, scores jsonb)
  where s.part_at = $2::timestamptz and s.organization_id = u.organization_id and s.trace_id = u.trace_id`;

/**
 * Writes `eval` events (eval_scores by metric name). A span whose metadata the results change (an
 * evaluation error shown, or one cleared: metadata is searched, so its search words change too), or
 * that is not stored as created yet, goes through applySpanEvents instead.
 */
export async function applyEvalResults(sql: Sql, events: readonly SpanEvent[]): Promise<void> {
  const byKey = groupBySpan(events);
  const whole: SpanEvent[] = [];
  await transaction(sql, async (tx) => {
    const keys = [...byKey.values()].map(([e]) => ({ org: e.organization_id, id: e.trace_id }));
    await takeLocks(
      tx,
      keys.map((k) => `span/${k.org}/${k.id}`),
    );
    const rows = await tx<Stored[]>`
      select s.organization_id, s.trace_id, s.part_at::text as part, s.created, s.versions, s.scores, s.metadata, s.eval_scores
      from ${idList(tx, keys)} join span_parts k on k.organization_id = q.org and k.trace_id = q.id
        join spans s on s.organization_id = k.organization_id and s.trace_id = k.trace_id and s.part_at = k.part_at`;
    const stored = new Map(rows.map((r) => [`${r.organization_id}/${r.trace_id}`, r]));
    const updates = [];
    for (const [key, list] of byKey) {
      const row = stored.get(key);
      if (!row?.created) {
        whole.push(...list);
        continue;
      }
      const state = foldEvents(
        {
          created: true,
          versions: { create: row.versions.create ?? {}, update: row.versions.update ?? {} },
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
        versions: state.versions,
        eval_scores: state.fields.eval_scores,
        scores: derived.scores,
      });
    }
    for (const part of new Set(updates.map((u) => u.part))) {
      const rows = updates.filter((u) => u.part === part).map(({ part: _part, ...u }) => u);
      await tx.unsafe(UPDATE, [JSON.stringify(rows), part]);
    }
  });
  if (whole.length) await applySpanEvents(sql, whole);
}
