// What the worker's write transaction costs with the triggers that keep trace_roots (migration 00031), against
// the same writes without them: the floor. A database of its own; the worker's own call (applySpanEvents) in
// this process, one batch at a time, as one worker writes; batches of 20 traces of 5 realistic spans (about
// 2 KB each), root first, as the ingest benchmarks send them. Passes with and without the triggers alternate,
// 3 rounds, so that both see the same growing table. Writes bench/results/span-writes.json.
import { randomBytes } from 'node:crypto';
import { applySpanEvents, createSql, ensureOrganization, getOrCreateProject, migrate } from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { median, round, writeResult, type Row } from './lib/report';
import { tracePool, type BenchSpan } from './lib/spans';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TRACES_PER_PASS = Number(process.env.BENCH_TRACES ?? 4000);
const TRACES_PER_BATCH = 20;

const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(base);
url.pathname = `/sightline_bench_writes_${randomBytes(3).toString('hex')}`;
const admin = createSql(base, { max: 1 });
await migrate(url.toString());
const sql = createSql(url.toString(), { max: 2 });
let seq = 1;

/** The events a client's spans become (spanCreateEvent), the project named by its id. */
const events = (org: string, project: string, traces: BenchSpan[][]): SpanEvent[] =>
  traces.flat().map(({ trace_id, project_name: _, children: __, ...fields }) => ({
    kind: 'create',
    organization_id: org,
    trace_id,
    seq: seq++,
    fields: { ...fields, project_id: project } as SpanEvent['fields'],
  }));

try {
  const org = await ensureOrganization(sql, 'bench');
  const project = (await getOrCreateProject(sql, org, 'bench')).uuid;
  const triggers = await sql<{ name: string; def: string }[]>`
    select tgname as name, pg_get_triggerdef(oid) as def from pg_trigger
    where tgrelid = 'spans'::regclass and tgname like 'trace_roots_on_%'`;
  if (triggers.length !== 3) throw new Error(`expected the 3 trace_roots triggers, found ${triggers.length}`);
  const setTriggers = async (on: boolean) => {
    for (const t of triggers)
      await sql.unsafe(
        on ? t.def.replace('CREATE TRIGGER', 'CREATE OR REPLACE TRIGGER') : `drop trigger if exists ${t.name} on spans`,
      );
  };

  /** Spans written per second by one pass of fresh traces. */
  async function pass(withTriggers: boolean): Promise<number> {
    await setTriggers(withTriggers);
    const batches = Array.from({ length: TRACES_PER_PASS / TRACES_PER_BATCH }, () =>
      events(org, project, tracePool('bench', TRACES_PER_BATCH)),
    );
    const t = performance.now();
    for (const batch of batches) await applySpanEvents(sql, batch);
    return (batches.flat().length / (performance.now() - t)) * 1000;
  }

  await pass(true); // warm-up: plans, caches, the first partition's pages
  const rounds: { with: number; without: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so that neither always writes into the larger table.
    const first = r % 2 === 0;
    const a = await pass(first);
    const b = await pass(!first);
    rounds.push(first ? { with: a, without: b } : { with: b, without: a });
    await sql`analyze spans, trace_roots`;
    console.log(
      `round ${r + 1}: ${round(rounds[r].with)} spans/s with the triggers, ${round(rounds[r].without)} without`,
    );
  }
  await setTriggers(true);
  const [{ copied }] = await sql<{ copied: number }[]>`select count(*)::int as copied from trace_roots`;
  const expected = (ROUNDS + 1) * TRACES_PER_PASS;
  const ratios = rounds.map((r) => r.with / r.without);
  const summary: Row[] = [
    {
      figure: `span writes per second, one writer, batches of ${TRACES_PER_BATCH * 5} spans: with the trace_roots triggers / without (rounds' medians)`,
      value: `${round(median(rounds.map((r) => r.with)))} / ${round(median(rounds.map((r) => r.without)))}`,
    },
    {
      figure: 'with / without, per round',
      value: `${round(median(ratios), 3)} (rounds: ${ratios.map((x) => round(x, 3)).join(', ')})`,
    },
    { figure: 'roots in trace_roots / traces written with the triggers on', value: `${copied} / ${expected}` },
  ];
  writeResult({ benchmark: 'span-writes', summary, rounds });
} finally {
  await sql.end();
  await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
  await admin.end();
}
