// What the worker's write transaction costs with the triggers that keep trace_roots (migration 00031), the
// dashboard's hourly changes (00033) and the sessions' and users' changes (00034; both triggers on trace_roots),
// against the same writes with trace_roots alone and without any: the floor. A database of its own; the worker's own call (applySpanEvents) in this process, one
// batch at a time, as one worker writes; batches of 20 traces of 5 realistic spans (about 2 KB each), root first,
// as the ingest benchmarks send them. The three kinds of pass take turns, in a rotating order, 3 rounds, so that
// all see the same growing table. Writes bench/results/span-writes.json.
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
  const triggers = await sql<{ name: string; table: string; def: string }[]>`
    select tgname as name, tgrelid::regclass::text as table, pg_get_triggerdef(oid) as def from pg_trigger
    where tgrelid = 'spans'::regclass and tgname like 'trace_roots_on_%'
      or tgrelid = 'trace_roots'::regclass and (tgname like 'trace_hours_on_%' or tgname like 'trace_groups_on_%')`;
  if (triggers.length !== 9)
    throw new Error(`expected the 9 trace_roots, trace_hours and trace_groups triggers, found ${triggers.length}`);
  type Mode = 'all' | 'roots' | 'none';
  const MODES: Mode[] = ['all', 'roots', 'none'];
  const setTriggers = async (mode: Mode) => {
    for (const t of triggers) {
      const on = mode === 'all' || (mode === 'roots' && t.table === 'spans');
      await sql.unsafe(
        on
          ? t.def.replace('CREATE TRIGGER', 'CREATE OR REPLACE TRIGGER')
          : `drop trigger if exists ${t.name} on ${t.table}`,
      );
    }
  };

  /** Spans written per second by one pass of fresh traces. */
  async function pass(mode: Mode): Promise<number> {
    await setTriggers(mode);
    const batches = Array.from({ length: TRACES_PER_PASS / TRACES_PER_BATCH }, () =>
      events(org, project, tracePool('bench', TRACES_PER_BATCH)),
    );
    const t = performance.now();
    for (const batch of batches) await applySpanEvents(sql, batch);
    return (batches.flat().length / (performance.now() - t)) * 1000;
  }

  await pass('all'); // warm-up: plans, caches, the first partition's pages
  const rounds: Record<Mode, number>[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Rotate which goes first, so that none always writes into the larger table.
    const speeds = {} as Record<Mode, number>;
    for (const mode of [...MODES.slice(r % 3), ...MODES.slice(0, r % 3)]) speeds[mode] = await pass(mode);
    rounds.push(speeds);
    await sql`analyze spans, trace_roots`;
    console.log(
      `round ${r + 1}: ${round(speeds.all)} spans/s with all, ${round(speeds.roots)} with trace_roots alone, ${round(speeds.none)} without`,
    );
  }
  await setTriggers('all');
  const [{ copied, changes, groupChanges }] = await sql<{ copied: number; changes: number; groupChanges: number }[]>`
    select (select count(*)::int from trace_roots) as copied, (select count(*)::int from trace_hour_changes) as changes,
      (select count(*)::int from trace_group_changes) as "groupChanges"`;
  // The warm-up and two passes a round write trace_roots.
  const expected = (1 + 2 * ROUNDS) * TRACES_PER_PASS;
  const ratio = (of: (r: Record<Mode, number>) => number) => {
    const ratios = rounds.map(of);
    return `${round(median(ratios), 3)} (rounds: ${ratios.map((x) => round(x, 3)).join(', ')})`;
  };
  const summary: Row[] = [
    {
      figure: `span writes per second, one writer, batches of ${TRACES_PER_BATCH * 5} spans: with the trace_roots, trace_hours and trace_groups triggers / trace_roots alone / none (rounds' medians)`,
      value: MODES.map((m) => round(median(rounds.map((r) => r[m])))).join(' / '),
    },
    { figure: 'with all / with none, per round', value: ratio((r) => r.all / r.none) },
    { figure: 'with all / with trace_roots alone, per round', value: ratio((r) => r.all / r.roots) },
    { figure: 'roots in trace_roots / traces written with the triggers on', value: `${copied} / ${expected}` },
    { figure: 'hourly changes not folded (no fold runs here)', value: String(changes) },
    { figure: "sessions' and users' changes not folded", value: String(groupChanges) },
  ];
  writeResult({ benchmark: 'span-writes', summary, rounds });
} finally {
  await sql.end();
  await admin.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
  await admin.end();
}
