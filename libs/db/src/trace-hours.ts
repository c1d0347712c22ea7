import type { Sql } from './client';

/**
 * Folds the roots' changes into the hourly sums the dashboard reads (fold_trace_hours, migration 00033), a
 * chunk at a time until none is left or `shouldStop`, and returns how many it folded. The dashboard counts the
 * changes not folded yet as well, so folding changes no figure: it keeps the changes few, each read by every
 * dashboard until folded.
 */
export async function foldTraceHours(
  sql: Sql,
  { chunk = 50_000, shouldStop = () => false }: { chunk?: number; shouldStop?: () => boolean } = {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const [{ folded }] = await sql<{ folded: number }[]>`select fold_trace_hours(${chunk})::int as folded`;
    total += folded;
    if (folded < chunk || shouldStop()) return total;
  }
}
