import type { Sql } from './client';

// The listing's plans depend on how many roots each project has and how names and statuses spread in
// it. PostgreSQL's autovacuum analyzes a table again only once a tenth of it has changed (and not at all
// where it is turned off), so in a large spans table a project that grows by millions of spans stays
// "empty" to the planner. It then reads all of that project's roots in time order to find one trace
// name (25 ms for 8,000 roots, seconds for a million) instead of looking the name up in
// spans_roots_by_name (0.07 ms).
const ANALYZED_TABLES = ['spans', 'span_scores'];

/**
 * Analyzes each span table with at least `minChangedRows` rows inserted, updated or deleted since its last
 * analysis (by anyone, autovacuum included). ANALYZE reads a fixed sample (30,000 rows at the default
 * statistics target) whatever the table's size, and takes no lock that writes wait for.
 */
export async function analyzeChangedTables(
  sql: Sql,
  minChangedRows: number,
  tables: readonly string[] = ANALYZED_TABLES,
): Promise<string[]> {
  const stale = await sql<{ table: string }[]>`
    select relname as table from pg_stat_user_tables
    where schemaname = current_schema() and relname = any(${tables as string[]}) and n_mod_since_analyze >= ${minChangedRows}`;
  for (const { table } of stale) await sql`analyze ${sql(table)}`;
  return stale.map((s) => s.table);
}
