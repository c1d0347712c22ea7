import type { Sql } from './client';
import { traceRoots, type TraceRoot } from './span-tree';

/**
 * A trace's total of a measure (cost, tokens) as SQL, for the root span aliased `root`: the root's own value
 * when the client set one there (it then already covers the trace), else the sum over the trace's spans,
 * read from the covering `spans_by_root`. The traces table, the dashboard, sessions and experiment
 * comparisons all count this way, so that their figures add up. `inPartition` sums the root's partition
 * alone, which holds every span of its trace (span-writes.ts places them there), read by one index.
 */
export const traceTotal = (root: string, column: string, { inPartition = false } = {}) =>
  `coalesce(${root}.${column}, (select sum(c.${column}) from spans c where c.organization_id = ${root}.organization_id and c.root_trace_id = ${root}.trace_id${inPartition ? ` and c.part_at = ${root}.part_at` : ''} and c.created))`;

/**
 * A trace's calls and cost by model as SQL, `[{"model": m, "calls": n, "cost": x}, ...]` by model or null
 * without a model, for the root span aliased `root`: over the spans of its partition, which holds every span
 * of its trace.
 */
const traceModels = (root: string) => `(
  select jsonb_agg(jsonb_build_object('model', m.model, 'calls', m.calls, 'cost', m.cost) order by m.model) from (
    select c.model, count(*) as calls, sum(c.cost) as cost from spans c
    where c.organization_id = ${root}.organization_id and c.root_trace_id = ${root}.trace_id
      and c.part_at = ${root}.part_at and c.created and c.model is not null
    group by c.model) m)`;

/**
 * Whether a trace's totals count an estimate (usage-estimate.ts), as SQL for the root span aliased `root`: the
 * root's own mark when its own cost or tokens stand for the trace, else whether any span of it is estimated.
 */
const traceEstimated = (
  root: string,
) => `coalesce(case when ${root}.cost is not null or ${root}.total_tokens is not null
  then ${root}.usage_estimated else (select bool_or(c.usage_estimated) from spans c
    where c.organization_id = ${root}.organization_id and c.root_trace_id = ${root}.trace_id
      and c.part_at = ${root}.part_at and c.created) end, false)`;

/**
 * Stores the totals of the traces under `roots` on their root rows: `trace_cost` and `trace_tokens`
 * (migration 00026), which the listing's orders by cost and tokens read from their indexes, and
 * `trace_input_tokens`, `trace_output_tokens` and `trace_models` (00030), which the dashboard sums, and
 * `trace_usage_estimated` (00032), which the traces table marks. The span writer calls it
 * after writing, under the traces' locks, for every trace whose spans' contribution changed: whoever writes
 * last then sums every span of the trace committed, so a root stored after its children gets their totals.
 * A trace whose root is not stored yet has no row to hold them; its root's own write sums them. Rows whose
 * totals are unchanged are not written again.
 */
export async function storeTraceTotals(tx: Sql, roots: TraceRoot[]): Promise<void> {
  if (!roots.length) return;
  await tx`
    with totals as (
      select s.organization_id, s.trace_id, s.part_at,
        ${tx.unsafe(traceTotal('s', 'cost', { inPartition: true }))} as cost,
        ${tx.unsafe(traceTotal('s', 'total_tokens', { inPartition: true }))} as tokens,
        ${tx.unsafe(traceTotal('s', 'input_tokens', { inPartition: true }))} as input_tokens,
        ${tx.unsafe(traceTotal('s', 'output_tokens', { inPartition: true }))} as output_tokens,
        ${tx.unsafe(traceModels('s'))} as models,
        ${tx.unsafe(traceEstimated('s'))} as estimated
      from ${traceRoots(tx, roots)}
      join spans s on s.organization_id = r.org and s.trace_id = r.root and s.part_at = r.part::timestamptz
    )
    update spans s set trace_cost = t.cost, trace_tokens = t.tokens, trace_input_tokens = t.input_tokens,
      trace_output_tokens = t.output_tokens, trace_models = t.models, trace_usage_estimated = t.estimated
    from totals t
    where s.organization_id = t.organization_id and s.trace_id = t.trace_id and s.part_at = t.part_at
      and (s.trace_cost, s.trace_tokens, s.trace_input_tokens, s.trace_output_tokens, s.trace_models, s.trace_usage_estimated)
        is distinct from (t.cost, t.tokens, t.input_tokens, t.output_tokens, t.models, t.estimated)`;
}
