import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_TREES } from '@sightline/core';
import {
  applySpanEvents,
  createSql,
  dashboard,
  ensureSpanPartitions,
  findSpanText,
  findTraceTextOf,
  foldTraceGroups,
  foldTraceHours,
  getOrCreateProject,
  rootListingSql,
  spanPartitionOf,
  spanTextsOfRoots,
  spanTextsWithRecords,
  traceGroups,
  traceRowsOf,
  traceSkeleton,
  traceSpansContaining,
  type RootQuery,
  type Sql,
} from '@sightline/db';
import { useSql } from '../support/fixtures';
import { databaseUrl, newOrganization } from '../support/services';

// The listing's common shapes must be served by indexes, not by scanning every span. 50k spans over
// several projects are enough for the planner to prefer the indexes it would use on millions.
const { sql } = useSql();
let org: string;
let project: string;
/** The partition that holds this file's spans: today's. */
let dataPartition: string;

beforeAll(async () => {
  org = (await newOrganization(sql, 'plans')).id;
  const projects = await Promise.all(['p0', 'p1', 'p2', 'p3', 'p4'].map((n) => getOrCreateProject(sql, org, n)));
  project = projects[0].uuid;
  await sql`
    insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, trace_name, start_ts, status, metadata, tags, latency, trace_cost, trace_tokens, scores)
    select ${org}::uuid, id, (${sql.array(projects.map((p) => p.uuid))}::uuid[])[1 + i % 5], id, id, true, 0,
           'name-' || (i % 100), now() - i * interval '1 second', case when i % 7 = 0 then 'error' else 'success' end,
           jsonb_build_object('customer', 'c' || (i % 1000)), array['tag' || (i % 50)], (i % 1000) / 100.0,
           (i % 997) / 1000.0, i % 3001,
           jsonb_build_array(jsonb_build_object('name', 'accuracy', 'score', (i % 1000) / 1000.0))
    from (select gen_random_uuid() as id, i from generate_series(1, 50000) i) g`;
  // span_scores too (its triggers filled it): left to autovacuum, a plan read before it runs sees an empty table.
  await sql`analyze spans, span_scores, trace_roots`;
  [{ dataPartition }] = await sql<{ dataPartition: string }[]>`
    select tableoid::regclass::text as "dataPartition" from spans where organization_id = ${org} limit 1`;
}, 60_000);

async function plan(
  filter?: RootQuery['filter'],
  part: 'page' | 'count' = 'page',
  status?: string,
  sort?: RootQuery['sort'],
): Promise<string> {
  const { page, count, params } = rootListingSql({
    organizationId: org,
    projectId: project,
    filter,
    status,
    sort,
    page: 3,
    pageSize: 20,
  });
  const rows = await sql.unsafe(
    `explain ${part === 'page' ? page : count}`,
    (part === 'page' ? params : params.slice(0, -2)) as never[],
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}
/**
 * Whether a plan reads this test's spans whole: a sequential scan of the partition that holds them (other
 * tests' small partitions may be scanned, as reading a few pages costs less than an index).
 */
const scansWhole = (p: string, alias = 's') =>
  [...p.matchAll(/Seq Scan on (spans\w*) (\w+)/g)].some(
    ([, table, a]) => table === dataPartition && a.startsWith(alias),
  );
/** A sort node (a Merge Append's own "Sort Key" merges sorted index scans). */
const SORT = /\bSort\s+\(cost/;

const filter = (filter_field: string, filter_operator: string, filter_value: string, filter_key?: string) => ({
  filter_field,
  filter_operator,
  filter_value,
  filter_key,
});

describe('query plans of get_trace_logs', () => {
  it('serves the newest-first page of a project from the roots index', async () => {
    const p = await plan();
    expect(p).toContain('spans_roots');
    expect(scansWhole(p)).toBe(false);
  });
  it('serves metadata and tag filters from the GIN indexes or the start index of trace_roots', async () => {
    for (const w of [filter('metadata', 'equals', 'c7', 'customer'), filter('tags', 'equals', 'tag3')])
      for (const part of ['page', 'count'] as const) {
        const p = await plan(w, part);
        expect(p).toMatch(/trace_roots_(metadata|tags|by_start)/);
        expect(p).not.toMatch(/ on spans/);
      }
  });
  it('does not scan the table for a trace-name filter', async () => {
    expect(scansWhole(await plan(filter('trace_name', 'equals', 'name-5')))).toBe(false);
  });
  it('counts a trace-name or status filter from a roots-only index on it', async () => {
    // The total is exact, so every matching root is counted: from the small index of roots by that field,
    // never by reading every root of the project.
    expect(await plan(filter('trace_name', 'equals', 'name-5'), 'count')).toMatch(/spans_roots_by_name/);
    expect(await plan(undefined, 'count', 'error')).toMatch(/spans_roots_by_status/);
    expect(await plan(undefined, 'page', 'error')).toMatch(/spans_roots_by_status/);
  });
  it('serves the oldest-first and slowest-first pages from an index, without sorting the roots', async () => {
    const oldest = await plan(undefined, 'page', undefined, 'oldest');
    expect(oldest).toMatch(/Index (Only )?Scan Backward using spans_roots_\d+ on spans_\d+/);
    const slowest = await plan(undefined, 'page', undefined, 'slowest');
    expect(slowest).toMatch(/spans_roots_by_latency/);
    for (const p of [oldest, slowest]) {
      expect(p).not.toMatch(SORT);
      expect(scansWhole(p)).toBe(false);
    }
  });
  it('serves the orders by a trace’s cost and tokens from their indexes, without sorting the roots', async () => {
    const indexes = {
      costliest: 'spans_roots_by_cost',
      cheapest: 'spans_roots_by_cost_asc',
      most_tokens: 'spans_roots_by_tokens',
      fewest_tokens: 'spans_roots_by_tokens_asc',
    } as const;
    for (const [sort, index] of Object.entries(indexes)) {
      const p = await plan(undefined, 'page', undefined, sort as RootQuery['sort']);
      expect(p).toMatch(new RegExp(`Index (Only )?Scan using ${index}_\\d+ on spans_\\d+`));
      expect(p).not.toMatch(SORT);
      expect(scansWhole(p)).toBe(false);
    }
  });
  it("counts production's roots (experiment runs left out) from indexes, as the console's default view needs", async () => {
    // "experiment_uuid is null" is in no roots index: counted as such, every root of the project was read
    // from the table (1.5 s at 200k roots, against 0.1 s from the index).
    for (const filters of [[], [filter('trace_name', 'equals', 'name-5')]]) {
      const { count, params } = rootListingSql({
        organizationId: org,
        projectId: project,
        includeExperiments: false,
        filters,
        page: 1,
        pageSize: 20,
      });
      const p = (await sql.unsafe(`explain ${count}`, params.slice(0, -2) as never[]))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(p).toMatch(/spans_roots\w*_\d+/);
      expect(p).toMatch(/spans_experiment_roots/);
      expect(scansWhole(p)).toBe(false);
    }
  });
  it('counts a time range by start and, for roots stored without one, by first-stored time, from two indexes', async () => {
    const { count, params } = rootListingSql({
      organizationId: org,
      projectId: project,
      timeRange: '1h',
      page: 1,
      pageSize: 20,
    });
    const p = (await sql.unsafe(`explain ${count}`, params.slice(0, -2) as never[]))
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(p).toMatch(/spans_roots_\d+/);
    expect(p).toMatch(/spans_roots_unstarted/);
    expect(scansWhole(p)).toBe(false);
  });
  it('serves three filters at once, production traces alone, from indexes', async () => {
    // The console's default view leaves out experiment runs' traces; with a name, a metadata and a score filter.
    const query: RootQuery = {
      organizationId: org,
      projectId: project,
      includeExperiments: false,
      filters: [
        filter('trace_name', 'equals', 'name-5'),
        filter('metadata', 'equals', 'c5', 'customer'),
        filter('score:accuracy', 'greater_than_or_equal', '0.001'),
      ],
      timeRange: '24h',
      page: 1,
      pageSize: 20,
    };
    for (const sort of ['newest', 'costliest', 'name_asc'] as const) {
      const { page, count, params } = rootListingSql({ ...query, sort });
      for (const [text, values] of [
        [page, params],
        [count, params.slice(0, -2)],
      ] as const) {
        const p = (await sql.unsafe(`explain ${text}`, values as never[])).map((r) => r['QUERY PLAN']).join('\n');
        expect(p).toMatch(/spans_roots|spans_metadata|span_scores/);
        expect(scansWhole(p)).toBe(false);
      }
    }
  });
  it('counts and pages under a metadata or score filter from trace_roots, not spans', async () => {
    // A root that passes the name's index but not the metadata or score condition cost a heap page of spans
    // each (460 ms for 16,666 roots at 1M spans); trace_roots packs many roots to a page (about 60 ms).
    const filters = [filter('trace_name', 'equals', 'name-5'), filter('metadata', 'equals', 'c5', 'customer')];
    for (const sort of ['newest', 'costliest', 'fewest_tokens'] as const) {
      const { page, count, params, source } = rootListingSql({
        organizationId: org,
        projectId: project,
        includeExperiments: false,
        filters,
        sort,
        page: 1,
        pageSize: 20,
      });
      expect(source).toBe('trace_roots');
      for (const [text, values] of [
        [page, params],
        [count, params.slice(0, -2)],
      ] as const) {
        const p = (await sql.unsafe(`explain ${text}`, values as never[])).map((r) => r['QUERY PLAN']).join('\n');
        expect(p).toMatch(/ on trace_roots /);
        expect(p).not.toMatch(/ on spans/);
      }
    }
    // A name alone is counted from the roots index of spans, and the newest page walks it.
    expect(
      rootListingSql({ organizationId: org, projectId: project, filters: filters.slice(0, 1), page: 1, pageSize: 20 })
        .source,
    ).toBe('spans');
  });
  it('walks trace_roots in cost and tokens order under a score filter, stopping at the page, without sorting', async () => {
    // Three filters matching about 16,700 of 2,000,000 roots took 1.0-1.2 s by cost: every match read, then sorted.
    for (const [sort, index] of [
      ['costliest', 'trace_roots_by_cost'],
      ['most_tokens', 'trace_roots_by_tokens'],
    ] as const) {
      const { page, params, source } = rootListingSql({
        organizationId: org,
        projectId: project,
        filters: [filter('score:accuracy', 'greater_than_or_equal', '0.5')],
        status: 'success',
        sort,
        page: 1,
        pageSize: 20,
      });
      expect(source).toBe('trace_roots');
      const p = (await sql.unsafe(`explain ${page}`, params as never[])).map((r) => r['QUERY PLAN']).join('\n');
      expect(p).toMatch(new RegExp(`Index (Only )?Scan using ${index} on trace_roots`));
      expect(p).not.toMatch(SORT);
    }
  });
  it('serves the fastest-first and by-name pages from an index, without sorting the roots', async () => {
    const fastest = await plan(undefined, 'page', undefined, 'fastest');
    expect(fastest).toMatch(/Index (Only )?Scan Backward using spans_roots_by_latency/);
    const byName = await plan(undefined, 'page', undefined, 'name_asc');
    expect(byName).toMatch(/spans_roots_by_name/);
    const byNameBack = await plan(undefined, 'page', undefined, 'name_desc');
    expect(byNameBack).toMatch(/Index (Only )?Scan Backward using spans_roots_by_name/);
    for (const p of [fastest, byName, byNameBack]) {
      expect(p).not.toMatch(SORT);
      expect(scansWhole(p)).toBe(false);
    }
  });
  it('reads a score filter from the span_scores index, not from the scores JSON of each root', async () => {
    // Unnesting every root's scores JSON to count 10% of 200k roots took about 800 ms; the index, 150 ms.
    const accurate = filter('score:accuracy', 'greater_than_or_equal', '0.9');
    for (const part of ['count', 'page'] as const) {
      const p = await plan(accurate, part);
      expect(p).toMatch(/span_scores_by_name|span_scores_of_span/);
      expect(p).not.toMatch(/jsonb/);
      expect(scansWhole(p)).toBe(false);
    }
    expect(await plan(accurate, 'count')).toMatch(/span_scores_by_name/);
  });
});

describe('query plan of the dashboard', () => {
  /** The plans of the dashboard over the last `days`, in buckets of `bucketSeconds`, as auto_explain logs them. */
  async function dashboardPlans(days: number, bucketSeconds: number) {
    const plans: string[] = [];
    const one = createSql(databaseUrl(), { max: 1, onnotice: (n) => plans.push(n.message) });
    try {
      await one`load 'auto_explain'`;
      await one`set auto_explain.log_min_duration = 0`;
      await one`set client_min_messages = log`;
      const to = new Date();
      const from = new Date(to.getTime() - days * 86_400_000);
      const d = await dashboard(one, { organizationId: org, projectId: project, from, to, bucketSeconds });
      return { d, plans };
    } finally {
      await one.end();
    }
  }

  it('reads the window’s roots once, from their narrow copy, and no span', async () => {
    // Summing each root's spans through spans_by_root made 46k index probes for 7 days of a 200k-trace
    // project (1.2-1.7 s), and the wide rows of spans cost a page a root; trace_roots holds each trace's sums.
    await sql`
      update spans set trace_models = jsonb_build_array(jsonb_build_object('model', 'm1', 'calls', 2, 'cost', 0.002))
      where organization_id = ${org} and project_id = ${project} and depth = 0`;
    await sql`vacuum (analyze) spans, trace_roots`;
    const { d, plans } = await dashboardPlans(1, 1800);
    expect(d.models).toEqual([{ model: 'm1', calls: 2 * d.totals.traces, cost: expect.any(Number) }]);
    expect(d.latencyApproximate).toBe(false);
    const statements = plans.filter((x) => x.includes('from trace_roots s'));
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toMatch(/on spans/);
  }, 60_000);

  it('reads a long window from its hours’ sums, and only the roots of its last part hour', async () => {
    await foldTraceHours(sql);
    await sql`analyze trace_hours, trace_hour_changes`;
    const { d, plans } = await dashboardPlans(7, 3 * 3600);
    expect(d.latencyApproximate).toBe(true);
    const [{ roots }] = await sql<{ roots: number }[]>`
      select count(*)::int as roots from trace_roots where organization_id = ${org} and project_id = ${project}
        and experiment_uuid is null and start_ts >= now() - interval '7 days'`;
    expect(d.totals.traces).toBe(roots);
    const statements = plans.filter((x) => x.includes('trace_hours'));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/Index Scan using trace_hours_pkey|Bitmap Index Scan on trace_hours_pkey/);
    expect(statements[0]).toMatch(/trace_roots_by_start/);
    expect(statements[0]).not.toMatch(/Seq Scan on trace_roots|on spans/);
  }, 60_000);
});

/** The plans of every statement `work` runs on one connection, as executed (auto_explain with ANALYZE). */
async function executedPlans(work: (one: Sql) => Promise<unknown>): Promise<string[]> {
  const plans: string[] = [];
  const one = createSql(databaseUrl(), { max: 1, onnotice: (n) => plans.push(n.message) });
  try {
    await one`load 'auto_explain'`;
    await one`set auto_explain.log_min_duration = 0`;
    await one`set auto_explain.log_analyze = true`;
    await one`set auto_explain.log_nested_statements = true`;
    await one`set client_min_messages = log`;
    await work(one);
  } finally {
    await one.end();
  }
  return plans;
}

describe('query plan of the sessions page', () => {
  it('walks the groups’ sums in the order of the page and stops after it, whatever the number of groups', async () => {
    // About 2,500 sessions of 4 traces each (a tenth left pending, as between two folds); grouping the roots read
    // every one of them, 536 ms at the p99 for 200,000 traces.
    await sql`
      update spans set session_id = 's-' || (abs(hashtext(trace_id::text)) % 2500)
      where organization_id = ${org} and project_id = ${project} and depth = 0`;
    await foldTraceGroups(sql);
    await sql`
      update spans set status = 'error'
      where organization_id = ${org} and project_id = ${project} and depth = 0 and session_id like '%7'`;
    await sql`vacuum (analyze) trace_roots, trace_groups, trace_group_changes`;
    const page = { organizationId: org, projectId: project, by: 'session_id', page: 2, pageSize: 50 } as const;
    let rows: Record<string, unknown>[] = [];
    const plans = await executedPlans(async (one) => {
      rows = await traceGroups(one, { ...page, since: null });
    });
    expect(rows.map((r) => r.key)).toEqual((await traceGroups(sql, { ...page, since: new Date(0) })).map((r) => r.key));
    const [{ sessions }] = await sql<{ sessions: number }[]>`
      select count(distinct session_id)::int as sessions from trace_roots
      where organization_id = ${org} and project_id = ${project} and experiment_uuid is null`;
    expect(rows[0].total).toBe(sessions);
    const [statement] = plans.filter((x) => x.includes('trace_group_changes'));
    const walked = statement.match(
      /Index Scan using trace_groups_by_last on trace_groups g .*?actual time=\S+ rows=(\d+)/,
    );
    expect(walked, statement).not.toBeNull();
    // The walk skips the groups with pending changes (read apart), so it reads at most the page's end plus those.
    const [{ pending }] = await sql<{ pending: number }[]>`
      select count(distinct key)::int as pending from trace_group_changes
      where organization_id = ${org} and project_id = ${project} and grouped_by = 'session_id'`;
    expect(Number(walked![1]), statement).toBeLessThanOrEqual(100 + pending);
    expect(100 + pending).toBeLessThan(sessions / 2);
    expect(statement).not.toMatch(/on trace_roots|on spans/);
  }, 60_000);
});

describe('query plans of the write path and of reads by id', () => {
  /** The partitions a plan read rows from: scans that ran (not pruned, not "never executed"). */
  const partitionsRead = (p: string) =>
    [...p.matchAll(/on (spans_\w+) \w+\s+\(cost=[^)]*\)\s+\(actual time=/g)].map(([, t]) => t);
  /** The partitions a plan names at all: read, or planned and then left out as it ran. */
  const partitionsPlanned = (p: string) => [...p.matchAll(/on (spans_\w+) \w+\s+\(cost=/g)].map(([, t]) => t);

  it('reads each span of a batch, and a span by id, from its own partition', async () => {
    // Spans in an old partition and today's; the batch touches the old trace again.
    const old = new Date(Date.now() - 5 * 86_400_000);
    await ensureSpanPartitions(sql, { from: old, to: old });
    const root = randomUUID();
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, depth, execution_order, part_at)
      values (${org}, ${root}, ${root}, ${root}, true, 0, 0, ${old})`;
    const child = randomUUID();
    const plans = await executedPlans(async (one) => {
      await applySpanEvents(one, [
        { kind: 'update', organization_id: org, trace_id: root, seq: 1, fields: { output: 'again' } },
        {
          kind: 'create',
          organization_id: org,
          trace_id: child,
          seq: 2,
          fields: { root_trace_id: root, parent_trace_id: root },
        },
      ]);
      await findSpanText(one, org, child);
    });
    const oldName = spanPartitionOf(old);
    // The batch's read: its keys, then the rows of each partition they name (one here).
    const keys = plans.filter((p) =>
      p.includes('join span_parts k on k.organization_id = q.org and k.trace_id = q.id'),
    );
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/Index Scan (using|on) span_parts_pkey/);
    const read = plans.filter((p) => p.includes('join spans s on s.organization_id = q.org'));
    const byId = plans.filter((p) => p.includes("'{' ||") && p.includes('left join projects p'));
    expect(read).toHaveLength(1);
    expect(byId).toHaveLength(1);
    for (const p of [...read, ...byId]) {
      expect(scansWhole(p)).toBe(false);
      expect(p).toMatch(/Index Scan using spans_\d+_pkey/);
      expect(partitionsRead(p)).toEqual([oldName]);
    }
    expect(partitionsPlanned(byId[0]!)).toEqual([oldName]);
    // The trace's own statements (ordering its spans) read its partition alone too.
    const ordering = plans.filter((p) => p.includes('with recursive tree'));
    expect(ordering.length).toBeGreaterThan(0);
    for (const p of ordering) {
      expect(new Set(partitionsRead(p))).toEqual(new Set([oldName]));
    }
    const [{ depth }] = await sql<{ depth: number }[]>`select depth from spans where trace_id = ${child}`;
    expect(depth).toBe(1);
  });

  it("reads a trace's skeleton, its log, a search in it, its row and its export from the trace's partition alone", async () => {
    // A month of day partitions, as a deployment keeps: by the root's id alone, each read probed every one.
    const old = new Date(Date.now() - 20 * 86_400_000);
    await ensureSpanPartitions(sql, { from: new Date(Date.now() - 30 * 86_400_000) });
    const [root, step, call] = [randomUUID(), randomUUID(), randomUUID()];
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth,
                         execution_order, trace_name, output, part_at)
      values (${org}, ${root}, ${project}, ${root}, ${root}, true, 0, 0, 'agent', 'done', ${old}),
             (${org}, ${step}, ${project}, ${root}, ${root}, true, 1, 1, 'step', 'the weather', ${old}),
             (${org}, ${call}, ${project}, ${root}, ${step}, true, 2, 2, 'call', 'sunny', ${old})`;
    const reads: Record<string, unknown> = {};
    // The reads of one trace plan its partition alone: found as they ran, every partition was planned, and
    // each correlated subquery once a partition (50 ms of planning over a month, for a 10 ms read).
    const oneTrace = await executedPlans(async (one) => {
      reads.skeleton = JSON.parse(String(await traceSkeleton(one, org, call)));
      reads.log = await findTraceTextOf(one, org, step);
      reads.search = await traceSpansContaining(one, org, root, 'sunny');
    });
    const plans = await executedPlans(async (one) => {
      reads.row = JSON.parse(await traceRowsOf(one, org, [root]));
      reads.spans = await spanTextsOfRoots(one, org, [root]);
      reads.records = (await spanTextsWithRecords(one, org, [root], API_TREES, 'json', 'values')).records;
    });
    // What each read answers: the whole trace, found from any of its spans.
    expect((reads.skeleton as { spans: { trace_id: string }[] }).spans.map((s) => s.trace_id)).toEqual([
      root,
      step,
      call,
    ]);
    expect((reads.log as { trace_id: string[] }).trace_id.sort()).toEqual([root, step, call].sort());
    expect(reads.search).toEqual([call]);
    expect(reads.row).toMatchObject([{ trace_id: root, span_count: 3 }]);
    expect((reads.spans as { trace_id: string[] }).trace_id.sort()).toEqual([root, step, call].sort());
    expect([...(reads.records as Map<string, Buffer>).keys()]).toEqual([root]);
    const traceReads = oneTrace.filter((p) => /on spans_\w+ \w+\s+\(cost/.test(p));
    expect(traceReads.length).toBeGreaterThanOrEqual(3);
    for (const p of traceReads) expect(new Set(partitionsPlanned(p)), p).toEqual(new Set([spanPartitionOf(old)]));
    const read = [...traceReads, ...plans.filter((p) => /on spans_\w+ \w+\s+\(cost/.test(p))];
    expect(read.length).toBeGreaterThanOrEqual(6);
    for (const p of read) expect(new Set(partitionsRead(p)), p).toEqual(new Set([spanPartitionOf(old)]));
  }, 60_000);
});
