import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { analyzeChangedTables, getOrCreateProject, rootListingSql } from '@sightline/db';
import { useSql } from '../support/fixtures';
import { newOrganization } from '../support/services';

// The worker's statistics job keeps the planner's picture of the span tables fresh, whether or not
// autovacuum runs (it is off on this machine's PostgreSQL) and however large the table is.
const { sql } = useSql();

const lastAnalyzed = async (table: string) =>
  (await sql<{ at: Date | null }[]>`select last_analyze as at from pg_stat_user_tables where relname = ${table}`)[0]
    ?.at ?? null;

describe('analyzeChangedTables', () => {
  it('analyzes a table once enough rows changed since its last analysis, and not before', async () => {
    // A table of its own: the shared spans table is written and analyzed by other tests meanwhile.
    const table = `stats_probe_${randomBytes(4).toString('hex')}`;
    await sql`create table ${sql(table)} (id int primary key, name text)`;
    try {
      await sql`insert into ${sql(table)} select i, 'n' || i from generate_series(1, 2000) i`;
      expect(await analyzeChangedTables(sql, 1_000_000, [table])).toEqual([]);
      expect(await lastAnalyzed(table)).toBeNull();
      // A backend reports its changes to the statistics system within seconds of its transaction.
      await expect
        .poll(() => analyzeChangedTables(sql, 1000, [table]), { timeout: 20_000, interval: 500 })
        .toEqual([table]);
      expect(await lastAnalyzed(table)).not.toBeNull();
      const [{ estimate }] = await sql<
        { estimate: number }[]
      >`select reltuples::int as estimate from pg_class where relname = ${table}`;
      expect(estimate).toBe(2000);
      // Analyzed just now: nothing changed since.
      expect(await analyzeChangedTables(sql, 1000, [table])).toEqual([]);
    } finally {
      await sql`drop table ${sql(table)}`;
    }
  });

  it("leaves the listing's name filter on its index once the spans table is analyzed", async () => {
    const org = (await newOrganization(sql, 'stats')).id;
    const { uuid: project } = await getOrCreateProject(sql, org, 'grown');
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, trace_name, start_ts)
      select ${org}::uuid, id, ${project}::uuid, id, id, true, 0, 'name-' || i, now() - i * interval '1 second'
      from (select gen_random_uuid() as id, i from generate_series(1, 20000) i) g`;
    await expect
      .poll(async () => (await analyzeChangedTables(sql, 1)).some((t) => t.startsWith('spans_')), {
        timeout: 20_000,
        interval: 500,
      })
      .toBe(true);
    const { count, params } = rootListingSql({
      organizationId: org,
      projectId: project,
      filter: { filter_field: 'trace_name', filter_operator: 'equals', filter_value: 'name-7' },
      page: 1,
      pageSize: 1,
    });
    const plan = (await sql.unsafe(`explain ${count}`, params.slice(0, -2) as never[]))
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain('spans_roots_by_name');
    expect(plan).toMatch(/Index Cond: .*trace_name/);
  });
});
