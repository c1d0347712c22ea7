import type { Sql } from './client';

// The sums the console reads instead of the roots: the dashboard's hours (trace_hours, migration 00033) and the
// sessions' and users' (trace_groups, migration 00034). Triggers on trace_roots append each root's change; these
// fold them in. The readers count the changes not folded yet as well, so folding changes no figure: it keeps the
// changes few, each read by every reader until folded.

type FoldOptions = { chunk?: number; shouldStop?: () => boolean };

/** Calls a fold function a chunk at a time until none is left or `shouldStop`; returns how many it folded. */
async function foldAll(
  sql: Sql,
  fold: 'fold_trace_hours' | 'fold_trace_groups',
  { chunk = 50_000, shouldStop = () => false }: FoldOptions,
): Promise<number> {
  let total = 0;
  for (;;) {
    const [{ folded }] = await sql<{ folded: number }[]>`select ${sql(fold)}(${chunk})::int as folded`;
    total += folded;
    if (folded < chunk || shouldStop()) return total;
  }
}

/** Folds the roots' changes into the dashboard's hourly sums. */
export const foldTraceHours = (sql: Sql, options: FoldOptions = {}) => foldAll(sql, 'fold_trace_hours', options);

/** Folds the roots' changes into their sessions' and users' sums. */
export const foldTraceGroups = (sql: Sql, options: FoldOptions = {}) => foldAll(sql, 'fold_trace_groups', options);
