import type { Sql } from './client';

// The listing's plans depend on how many roots each project has and how names and statuses spread in
// it. PostgreSQL's autovacuum analyzes a table again only once a tenth of it has changed (and not at all
// where it is turned off), so in a large spans table a project that grows by millions of spans stays
// "empty" to the planner. It then reads all of that project's roots in time order to find one trace
// name (25 ms for 8,000 roots, seconds for a million) instead of looking the name up in
// spans_roots_by_name (0.07 ms).
const ANALYZED_TABLES = ['spans', 'span_scores', 'span_parts', 'trace_roots'];

/**
 * Analyzes each span table (each partition of spans: autovacuum never analyzes a partitioned table as a
 * whole, and the planner reads each partition's own statistics) with at least `minChangedRows` rows inserted, updated or deleted since its last
 * analysis (by anyone, autovacuum included). ANALYZE reads a fixed sample (30,000 rows at the default
 * statistics target) whatever the table's size, and takes no lock that writes wait for.
 */
export async function analyzeChangedTables(
  sql: Sql,
  minChangedRows: number,
  tables: readonly string[] = ANALYZED_TABLES,
): Promise<string[]> {
  const stale = await sql<{ table: string }[]>`
    select t.relname as table from pg_stat_user_tables t
    where t.schemaname = current_schema() and t.n_mod_since_analyze >= ${minChangedRows}
      and (t.relname = any(${tables as string[]})
        or exists (select from pg_inherits i join pg_class p on p.oid = i.inhparent
                   where i.inhrelid = t.relid and p.relname = any(${tables as string[]})))`;
  for (const { table } of stale) await sql`analyze ${sql(table)}`;
  return stale.map((s) => s.table);
}
