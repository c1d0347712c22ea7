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

/** The columns of a root that hold its trace's totals (storeTraceTotals). */
export const TRACE_TOTAL_COLUMNS = [
  'trace_cost',
  'trace_tokens',
  'trace_input_tokens',
  'trace_output_tokens',
  'trace_models',
  'trace_usage_estimated',
] as const;

type Row = Record<string, unknown>;
const sumOf = (rows: Row[], column: string) =>
  rows.reduce<number | null>((sum, r) => (r[column] == null ? sum : (sum ?? 0) + (r[column] as number)), null);

/**
 * Sets on each created root among `rows` its trace's totals as storeTraceTotals counts them (traceTotal,
 * traceModels, traceEstimated above), from the created spans of its trace in `rows` alone. A trace written whole
 * in one batch (a completion's log, most clients' traces) then gets its root inserted with its totals, and
 * storeTraceTotals, which still counts every committed span, finds nothing to change: the root is written once,
 * not inserted and updated (an update that is not HOT writes a new entry in every index of spans, and again in
 * trace_roots and the dashboard's hourly changes). Where the trace has spans outside the batch, or the sums differ
 * in their last digits (another order of addition, another collation of the models' names), the update corrects
 * the root as before. A trace with a model that is not a text leaves its root to the update.
 *
 * Returns the traces (`organization/root id`) whose root it left to storeTraceTotals, or whose totals the SQL
 * could count otherwise: more than one cost added (floating-point sums depend on their order) or more than one
 * model (ordered by the database's collation). For any other trace with its root here, a trace whose spans are
 * all in `rows` needs no recount.
 */
export function setBatchTraceTotals(rows: Row[]): Set<string> {
  const unsettled = new Set<string>();
  const byRoot = new Map<string, Row[]>();
  for (const row of rows) {
    if (!row.created) {
      // A root stored by updates alone takes the recount's totals too.
      unsettled.add(`${row.organization_id as string}/${row.trace_id as string}`);
      continue;
    }
    const key = `${row.organization_id as string}/${row.root_trace_id as string}`;
    const list = byRoot.get(key);
    if (list) list.push(row);
    else byRoot.set(key, [row]);
  }
  for (const [key, spans] of byRoot) {
    const root = spans.find((r) => r.trace_id === r.root_trace_id);
    const models = new Map<string, Row[]>();
    let textModels = true;
    for (const span of spans) {
      const model = (span.configuration as { model?: unknown } | null)?.model;
      if (model == null) continue;
      if (typeof model !== 'string') textModels = false;
      else if (models.has(model)) models.get(model)!.push(span);
      else models.set(model, [span]);
    }
    if (!root) continue;
    if (!textModels || models.size > 1 || spans.filter((s) => s.cost != null).length > 1) unsettled.add(key);
    if (!textModels) continue;
    const own = (column: string) => (root[column] as number | null) ?? sumOf(spans, column);
    const ownUsage = root.cost != null || root.total_tokens != null;
    Object.assign(root, {
      trace_cost: own('cost'),
      trace_tokens: own('total_tokens'),
      trace_input_tokens: own('input_tokens'),
      trace_output_tokens: own('output_tokens'),
      trace_models: models.size
        ? [...models.keys()]
            .sort()
            .map((model) => ({ model, calls: models.get(model)!.length, cost: sumOf(models.get(model)!, 'cost') }))
        : null,
      trace_usage_estimated:
        (ownUsage ? (root.usage_estimated as boolean | null) : spans.some((s) => s.usage_estimated === true)) ?? false,
    });
  }
  return unsettled;
}

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
