import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  createSql,
  deleteExpiredTraces,
  ensureOrganization,
  findSpanText,
  findTraceTextOf,
  migrate,
  spanPartitionOf,
  spanPartitions,
  type Sql,
} from '@sightline/db';
import { databaseUrl } from '../support/services';

// Migration 00017 partitions a spans table that has data, in place. A database of its own is migrated up
// to the migration before, filled, and then migrated: every row reads back the same, the old table and
// its indexes are kept as they are (not copied or rebuilt), and writes, reads and retention go on.
// `npm run bench -- partition-migration` does the same with 1M spans and times it.

let sql: Sql;
let admin: Sql;
let url: string;
let org: string;

// Traces of a root and two children, one root with scores, children whose root never arrived, and a row
// stored by an update alone.
const roots = Array.from({ length: 20 }, () => randomUUID());
const orphanRoot = randomUUID();
const updateOnly = randomUUID();

// Of the columns the spans had before: later migrations add their own (00026 and 00030 the traces' totals).
const checksum = async () =>
  (
    await sql<{ sum: string; n: number }[]>`
      select md5(string_agg((to_jsonb(s) - 'part_at' - 'trace_cost' - 'trace_tokens' - 'trace_input_tokens' - 'trace_output_tokens' - 'trace_models' - 'usage_estimated' - 'trace_usage_estimated')::text, ',' order by organization_id, trace_id)) as sum, count(*)::int as n
      from spans s`
  )[0];
const indexOids = async (table: string) =>
  new Map(
    (
      await sql<{ name: string; oid: number }[]>`
        select c.relname as name, c.oid::int as oid from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = ${table}::regclass and not i.indisprimary`
    ).map((r) => [r.name, r.oid]),
  );

beforeAll(async () => {
  const base = new URL(databaseUrl());
  base.pathname = `/${base.pathname.slice(1)}_parts_${randomBytes(3).toString('hex')}`;
  url = base.toString();
  await migrate(url, undefined, { upTo: 16 });
  sql = createSql(url, { max: 2 });
  admin = createSql(databaseUrl(), { max: 1 });
  org = await ensureOrganization(sql, 'migrated');
  await sql`
    insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                       output, start_ts, created_at, scores, versions)
    select ${org}::uuid, g.id, r.root, r.root, true, least(k, 1), k, 'out ' || k,
           now() - interval '2 days', now() - interval '2 days' + k * interval '1 second',
           case when k = 0 and r.i = 1 then '[{"name": "accuracy", "score": 0.5}]'::jsonb end, '{"create": {}, "update": {}}'
    from unnest(${sql.array(roots)}::uuid[]) with ordinality as r(root, i),
         generate_series(0, 2) k,
         lateral (select case when k = 0 then r.root else gen_random_uuid() end as id) g`;
  await sql`
    insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, versions, created_at)
    values (${org}, ${randomUUID()}, ${orphanRoot}, ${orphanRoot}, true, '{}', now() - interval '2 days'),
           (${org}, ${updateOnly}, ${updateOnly}, ${updateOnly}, false, '{}', now() - interval '2 days')`;
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists "${new URL(url).pathname.slice(1)}" with (force)`);
  await admin?.end();
});

describe('migrating a spans table with data to partitions', () => {
  it('keeps every row, the table and its indexes in place, and keys every span and trace', async () => {
    const before = await checksum();
    const beforeIndexes = await indexOids('spans');
    const [{ file: beforeFile }] = await sql<{ file: number }[]>`select pg_relation_filenode('spans')::int as file`;
    const [{ scores: scoresBefore }] = await sql<{ scores: number }[]>`select count(*)::int as scores from span_scores`;

    await migrate(url);

    expect(await checksum()).toEqual(before);
    expect(before.n).toBe(62);
    // The old table is a partition now, not a copy: same file, same indexes under their new names.
    const [{ file }] = await sql<{ file: number }[]>`select pg_relation_filenode('spans_legacy')::int as file`;
    expect(file).toBe(beforeFile);
    const legacyIndexes = await indexOids('spans_legacy');
    for (const [name, oid] of beforeIndexes) expect(legacyIndexes.get(`${name}_legacy`), name).toBe(oid);
    // Today's partition and the days ahead are made.
    expect((await spanPartitions(sql)).length).toBeGreaterThanOrEqual(8);
    // Every span has its key, and so does the root that never arrived.
    const [{ keys }] = await sql<{ keys: number }[]>`select count(*)::int as keys from span_parts`;
    expect(keys).toBe(62 + 1);
    const [{ scores }] = await sql<{ scores: number }[]>`select count(*)::int as scores from span_scores`;
    expect(scores).toBe(scoresBefore);

    // The score triggers fire once per write, not once for the parent and once for the old table.
    await sql`update spans set scores = '[{"name": "f1", "score": 1}, {"name": "f2", "score": 0}]' where trace_id = ${roots[1]}`;
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from span_scores where trace_id = ${roots[1]}`;
    expect(n).toBe(2);
  });

  it('writes the late spans of an old trace into the old table, new traces into the day, and reads both', async () => {
    const child = randomUUID();
    const fresh = randomUUID();
    await applySpanEvents(sql, [
      {
        kind: 'create',
        organization_id: org,
        trace_id: child,
        seq: 1,
        fields: { root_trace_id: roots[0], parent_trace_id: roots[0], output: 'late' },
      },
      { kind: 'create', organization_id: org, trace_id: fresh, seq: 2, fields: { output: 'new' } },
      { kind: 'update', organization_id: org, trace_id: roots[2], seq: 3, fields: { output: 'updated' } },
    ]);
    const where = async (id: string) =>
      (await sql<{ t: string }[]>`select tableoid::regclass::text as t from spans where trace_id = ${id}`).map(
        (r) => r.t,
      );
    expect(await where(child)).toEqual(['spans_legacy']);
    expect(await where(roots[2])).toEqual(['spans_legacy']);
    expect((await where(fresh))[0]).toMatch(/^spans_\d{8}$/);

    expect(JSON.parse((await findSpanText(sql, org, roots[2]))!).output).toBe('updated');
    const trace = await findTraceTextOf(sql, org, child);
    expect(trace!.trace_id).toHaveLength(4);
    expect(trace!.trace_id).toContain(child);
  });

  it('removes the old table’s expired traces row by row, with their keys', async () => {
    // Everything stored before the migration is two days old; the late child of roots[0] goes with its trace.
    const result = await deleteExpiredTraces(sql, { days: 1, batchSize: 10 });
    expect(result.spans).toBe(62 + 1);
    const [{ legacy }] = await sql<{ legacy: number }[]>`select count(*)::int as legacy from spans_legacy`;
    expect(legacy).toBe(0);
    const [{ keys }] = await sql<
      { keys: number }[]
    >`select count(*)::int as keys from span_parts where part_at = '-infinity'`;
    expect(keys).toBe(0);
    const [{ kept }] = await sql<{ kept: number }[]>`select count(*)::int as kept from spans`;
    expect(kept).toBe(1);
  });

  it('makes a missing partition when a span needs it, and stores the span', async () => {
    // As after a service that was down for longer than the days made ahead: today's partition is gone.
    const today = spanPartitionOf(new Date());
    await sql.unsafe(`drop table ${today}`);
    const id = randomUUID();
    await applySpanEvents(sql, [
      { kind: 'create', organization_id: org, trace_id: id, seq: 9, fields: { output: 'x' } },
    ]);
    expect(JSON.parse((await findSpanText(sql, org, id))!).output).toBe('x');
    expect((await spanPartitions(sql)).map((p) => p.name)).toContain(today);
  });
});
