// Partitioning a spans table that has data (migration 00017), on a copy of 1M spans: a database of its own
// is migrated up to the migration before, filled with 200k traces of 5 spans (about 1 KB each, the
// indexes of the real schema), and migrated. The migration holds its locks for its whole run, so its time
// is how long span reads and writes wait (the API keeps taking spans: they wait in Redis). Then the old
// spans are read back by id through the keys, as the worker reads a batch, and a late span of an old
// trace is written. Writes bench/results/partition-migration.json.
import { randomBytes, randomUUID } from 'node:crypto';
import { applySpanEvents, createSql, ensureOrganization, migrate } from '@sightline/db';
import { round, writeResult, type Row } from './lib/report';

const TRACES = Number(process.env.BENCH_TRACES ?? 200_000);
const SPANS_PER_TRACE = 5;

const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(base);
url.pathname = `/sightline_bench_parts_${randomBytes(3).toString('hex')}`;
const admin = createSql(base, { max: 1 });
await migrate(url.toString(), undefined, { upTo: 16 });
const sql = createSql(url.toString(), { max: 2 });
try {
  const org = await ensureOrganization(sql, 'bench');
  let t = performance.now();
  await sql`
    insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                       trace_name, inputs, output, metadata, start_ts, latency, versions, created_at)
    select ${org}::uuid, case when k = 0 then r.id else gen_random_uuid() end, r.id, r.id, true, least(k, 1), k,
           'span ' || k, jsonb_build_object('question', repeat(md5(r.i::text), 8)), repeat(md5(k::text || r.i), 8),
           jsonb_build_object('customer', 'c' || (r.i % 1000)), now() - r.i * interval '1 second', random(),
           '{"create": {}, "update": {}}', now() - r.i * interval '1 second'
    from (select gen_random_uuid() as id, i from generate_series(1, ${TRACES}) i) r, generate_series(0, ${SPANS_PER_TRACE - 1}) k`;
  await sql`vacuum (analyze) spans`;
  const seedSeconds = (performance.now() - t) / 1000;
  const [{ spans, bytes }] = await sql<{ spans: number; bytes: number }[]>`
    select count(*)::int as spans, pg_total_relation_size('spans')::float8 as bytes from spans`;
  console.log(`seeded ${spans} spans (${round(bytes / 2 ** 20)} MiB) in ${round(seedSeconds)} s`);
  const sample = (await sql<{ id: string }[]>`select trace_id as id from spans tablesample system (1) limit 500`).map(
    (r) => r.id,
  );

  t = performance.now();
  await migrate(url.toString());
  const migrateSeconds = (performance.now() - t) / 1000;
  console.log(`migrated in ${round(migrateSeconds)} s`);

  const [{ after, keys }] = await sql<{ after: number; keys: number }[]>`
    select (select count(*)::int from spans) as after, (select count(*)::int from span_parts) as keys`;
  // The worker's read of a batch: 500 existing spans by id, through their keys; and, to compare, the same
  // read of the old table alone, as before partitioning.
  const timed = async (query: () => Promise<{ n: number }[]>) => {
    const t0 = performance.now();
    const [{ n }] = await query();
    if (n !== sample.length) throw new Error(`read ${n} of ${sample.length} spans`);
    return performance.now() - t0;
  };
  // As the worker reads a batch: the keys, then the rows of each partition they name.
  const throughKeys = async () => {
    const keys = await sql<{ id: string; part: string }[]>`
      select k.trace_id as id, k.part_at::text as part from unnest(${sql.array(sample)}::uuid[]) q(id)
      join span_parts k on k.organization_id = ${org} and k.trace_id = q.id`;
    let n = 0;
    for (const part of new Set(keys.map((k) => k.part))) {
      const ids = keys.filter((k) => k.part === part).map((k) => k.id);
      const [read] = await sql<{ n: number }[]>`
        select count(s.*)::int as n from unnest(${sql.array(ids)}::uuid[]) q(id)
        join spans s on s.organization_id = ${org} and s.trace_id = q.id
        where s.part_at = ${part}::timestamptz`;
      n += read.n;
    }
    return [{ n }];
  };
  const oneTable = () => sql<{ n: number }[]>`
    select count(s.*)::int as n from unnest(${sql.array(sample)}::uuid[]) q(id)
    join spans_legacy s on s.organization_id = ${org} and s.trace_id = q.id`;
  // Interleaved, so that both read a cache as warm; the best of six each.
  const [keysTimes, oneTableTimes]: number[][] = [[], []];
  for (let i = 0; i < 6; i++) {
    keysTimes.push(await timed(throughKeys));
    oneTableTimes.push(await timed(oneTable));
  }
  const readMs = Math.min(...keysTimes);
  const oneTableMs = Math.min(...oneTableTimes);
  const [{ root }] = await sql<
    { root: string }[]
  >`select root_trace_id as root from spans where trace_id = ${sample[0]}`;
  const late = randomUUID();
  await applySpanEvents(sql, [
    {
      kind: 'create',
      organization_id: org,
      trace_id: late,
      seq: 1,
      fields: { root_trace_id: root, parent_trace_id: root, output: 'late' },
    },
  ]);
  const [{ table }] = await sql<
    { table: string }[]
  >`select tableoid::regclass::text as table from spans where trace_id = ${late}`;

  const summary: Row[] = [
    { figure: 'spans in the table', value: String(spans) },
    { figure: 'migration time (span reads and writes wait)', value: `${round(migrateSeconds)} s` },
    { figure: 'rows after / keys made', value: `${after} / ${keys}`, met: after === spans && keys === spans },
    { figure: 'read of 500 old spans by id, through their keys', value: `${round(readMs, 2)} ms` },
    { figure: 'the same read of the old table alone (before partitioning)', value: `${round(oneTableMs, 2)} ms` },
    { figure: 'a late span of an old trace lands in', value: table, met: table === 'spans_legacy' },
  ];
  writeResult({
    benchmark: 'partition-migration',
    summary,
    spans,
    table_mib: round(bytes / 2 ** 20),
    seed_seconds: round(seedSeconds),
    migrate_seconds: round(migrateSeconds, 2),
    read_500_ms: round(readMs, 2),
    read_500_one_table_ms: round(oneTableMs, 2),
  });
} finally {
  await sql.end();
  await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
  await admin.end();
}
