import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  createSql,
  deleteExpiredTraces,
  ensureSpanPartitions,
  findTraceTextOf,
  spanPartitionOf,
  spanPartitions,
} from '@sightline/db';
import { createProducer } from '@sightline/queues';
import { parseEnv, WorkerEnv, type SpanEvent } from '@sightline/schemas';
import { startWorkers } from '@sightline/worker';
import { buildStack, call, readTrace } from '../support/app';
import { databaseUrl, newOrganization, redisUrl, testRedis, uniquePrefix, useServices } from '../support/services';

// Tests share one database: everything here is stored 400 days ago, so that a one-year retention removes
// these spans and nothing any other test wrote.
const AGE = '400 days';
const DAY = 86_400_000;

const { sql, redis } = useServices();

type Row = { trace_id: string; root: string; parent?: string; created?: boolean; old: boolean };

/** Spans stored before partitioning: in the old table's partition, with their keys and their traces'. */
async function insertLegacy(org: string, rows: Row[]) {
  for (const r of rows) {
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, created_at, part_at)
      values (${org}, ${r.trace_id}, ${r.root}, ${r.parent ?? r.root}, ${r.created ?? true},
              ${r.old ? sql`now() - ${AGE}::interval` : sql`now()`}, '-infinity')`;
    await sql`insert into span_parts values (${org}, ${r.root}, '-infinity') on conflict do nothing`;
  }
}

async function storedIds(org: string): Promise<string[]> {
  return (
    await sql<{ trace_id: string }[]>`select trace_id from spans where organization_id = ${org} order by trace_id`
  ).map((r) => r.trace_id);
}
const keyCount = async (org: string) =>
  (await sql<{ n: number }[]>`select count(*)::int as n from span_parts where organization_id = ${org}`)[0].n;

/** A trace: its root and `children` spans; `recentChild` adds one stored just now. */
function trace(old: boolean, children: number, recentChild = false): Row[] {
  const root = randomUUID();
  return [
    { trace_id: root, root, old },
    ...Array.from({ length: children }, () => ({ trace_id: randomUUID(), root, parent: root, old })),
    ...(recentChild ? [{ trace_id: randomUUID(), root, parent: root, old: false }] : []),
  ];
}

/** Events creating `ids` in the trace under `root` (the first is the root when it is `root`). */
const creates = (org: string, root: string, ids: string[], output = 'late'): SpanEvent[] =>
  ids.map((trace_id, i) => ({
    kind: 'create',
    organization_id: org,
    trace_id,
    seq: Date.now() * 10 + i,
    fields: { root_trace_id: root, ...(trace_id !== root && { parent_trace_id: root }), output },
  }));

const partitionOf = async (org: string, id: string) =>
  (
    await sql<{ name: string }[]>`
      select tableoid::regclass::text as name from spans where organization_id = ${org} and trace_id = ${id}`
  ).map((r) => r.name);

describe('retention of partitioned spans', () => {
  it('drops the partitions of expired days whole, with their keys and score rows, and keeps the rest', async () => {
    const org = (await newOrganization(sql, 'partitions')).id;
    // Two expired days and one still kept, a year ago.
    const [expired1, expired2, kept] = [402, 401, 300].map((days) => new Date(Date.now() - days * DAY));
    for (const at of [expired1, expired2, kept]) await ensureSpanPartitions(sql, { from: at, to: at });
    const traces = [expired1, expired2, kept].map((at) => ({ at, spans: trace(true, 2) }));
    for (const { at, spans } of traces)
      for (const r of spans)
        await sql`
          insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, depth, part_at, scores)
          values (${org}, ${r.trace_id}, ${r.root}, ${r.parent ?? r.root}, true, ${r.trace_id === r.root ? 0 : 1}, ${at},
                  '[{"name": "accuracy", "score": 1}]')`;
    const names = [expired1, expired2, kept].map(spanPartitionOf);
    expect((await spanPartitions(sql)).map((p) => p.name)).toEqual(expect.arrayContaining(names));
    expect(await keyCount(org)).toBe(9);

    const result = await deleteExpiredTraces(sql, { days: 365, batchSize: 2 });
    expect(result.partitions).toEqual(expect.arrayContaining(names.slice(0, 2)));
    const left = (await spanPartitions(sql)).map((p) => p.name);
    expect(left).not.toContain(names[0]);
    expect(left).not.toContain(names[1]);
    expect(left).toContain(names[2]);
    // The days ahead are made by every run.
    expect(left).toContain(spanPartitionOf(new Date(Date.now() + 7 * DAY)));
    expect(await storedIds(org)).toEqual(traces[2].spans.map((r) => r.trace_id).sort());
    expect(await keyCount(org)).toBe(3);
    const [{ scores }] = await sql<{ scores: number }[]>`
      select count(*)::int as scores from span_scores where organization_id = ${org}`;
    expect(scores).toBe(3);
    // The listing's copy of the roots (trace_roots) keeps the kept day's alone.
    const roots = await sql`select trace_id from trace_roots where organization_id = ${org}`;
    expect(roots.map((r) => r.trace_id)).toEqual([traces[2].spans.find((r) => r.trace_id === r.root)!.trace_id]);
  });

  it("lands a span that arrives late in its trace's partition, and starts anew once that partition is dropped", async () => {
    const org = (await newOrganization(sql, 'late')).id;
    const at = new Date(Date.now() - 403 * DAY);
    await ensureSpanPartitions(sql, { from: at, to: at });
    const name = spanPartitionOf(at);
    const root = randomUUID();
    // The trace's root, stored 403 days ago.
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, part_at, depth, execution_order)
      values (${org}, ${root}, ${root}, ${root}, true, ${at}, 0, 0)`;

    // A child, and then an update of the root, arrive now: both land in the old partition, the root's row
    // updated in place (one row), the child placed in the tree.
    const child = randomUUID();
    await applySpanEvents(sql, creates(org, root, [child]));
    await applySpanEvents(sql, [
      { kind: 'update', organization_id: org, trace_id: root, seq: Date.now() * 10 + 5, fields: { output: 'done' } },
    ]);
    expect(await partitionOf(org, child)).toEqual([name]);
    expect(await partitionOf(org, root)).toEqual([name]);
    const [stored] = await sql<{ depth: number; output: string }[]>`
      select depth, (select output from spans where organization_id = ${org} and trace_id = ${root}) as output
      from spans where organization_id = ${org} and trace_id = ${child}`;
    expect(stored).toEqual({ depth: 1, output: 'done' });
    const text = await findTraceTextOf(sql, org, child);
    expect(text?.trace_id.sort()).toEqual([root, child].sort());

    // Once the day is dropped, the trace is gone; a span arriving for it later is stored anew, today.
    await deleteExpiredTraces(sql, { days: 365, batchSize: 100 });
    expect(await storedIds(org)).toEqual([]);
    const late = randomUUID();
    await applySpanEvents(sql, creates(org, root, [late]));
    const today = spanPartitionOf(new Date());
    expect(await partitionOf(org, late)).toEqual([today]);
  });

  it("moves a span stored by an update alone into its trace's partition once it is created", async () => {
    const org = (await newOrganization(sql, 'moved')).id;
    const at = new Date(Date.now() - 3 * DAY);
    await ensureSpanPartitions(sql, { from: at, to: at });
    const root = randomUUID();
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, part_at, depth, execution_order)
      values (${org}, ${root}, ${root}, ${root}, true, ${at}, 0, 0)`;
    // Feedback for a span not yet created: stored under itself, today.
    const child = randomUUID();
    await applySpanEvents(sql, [
      { kind: 'update', organization_id: org, trace_id: child, seq: Date.now() * 10, fields: { feedback_score: 1 } },
    ]);
    const today = spanPartitionOf(new Date());
    expect(await partitionOf(org, child)).toEqual([today]);
    // Its create names the old trace: one row, in the trace's partition, with both events' fields.
    await applySpanEvents(sql, creates(org, root, [child]));
    const name = spanPartitionOf(at);
    expect(await partitionOf(org, child)).toEqual([name]);
    const [row] = await sql<{ feedback_score: number; output: string; depth: number; part: string }[]>`
      select s.feedback_score, s.output, s.depth, k.part_at = s.part_at as part
      from spans s join span_parts k using (organization_id, trace_id)
      where s.organization_id = ${org} and s.trace_id = ${child}`;
    expect(row).toEqual({ feedback_score: 1, output: 'late', depth: 1, part: true });
  });
});

describe('deleteExpiredTraces on spans stored before partitioning', () => {
  it('removes whole expired traces in bounded statements, with their keys, and keeps the rest', async () => {
    const org = (await newOrganization(sql, 'retention')).id;
    const expiredWithRecentChild = trace(true, 2, true);
    const expired = trace(true, 1);
    const kept = trace(false, 2);
    // Children whose root never arrived, and a row that only ever got an update.
    const orphanRoot = randomUUID();
    const orphans: Row[] = [
      { trace_id: randomUUID(), root: orphanRoot, parent: orphanRoot, old: true },
      { trace_id: randomUUID(), root: orphanRoot, parent: orphanRoot, old: true },
    ];
    const updateOnly = randomUUID();
    const uncreated: Row[] = [{ trace_id: updateOnly, root: updateOnly, created: false, old: true }];
    await insertLegacy(org, [...expiredWithRecentChild, ...expired, ...kept, ...orphans, ...uncreated]);
    const removable = expiredWithRecentChild.length + expired.length + orphans.length + uncreated.length;

    const result = await deleteExpiredTraces(sql, { days: 365, batchSize: 2 });
    expect(result.spans).toBe(removable);
    // No statement removed more than 2 spans, so it took several.
    expect(result.statements).toBeGreaterThanOrEqual(Math.ceil(removable / 2));
    expect(await storedIds(org)).toEqual(kept.map((r) => r.trace_id).sort());
    // The keys of the removed spans went with them, the orphans' root's too.
    expect(await keyCount(org)).toBe(kept.length);

    // Nothing left to do: a second run removes nothing.
    expect((await deleteExpiredTraces(sql, { days: 365, batchSize: 2 })).spans).toBe(0);
  });

  it('leaves an interrupted trace findable: its newest spans go first, its oldest last', async () => {
    const org = (await newOrganization(sql, 'interrupted')).id;
    const big = trace(true, 3, true);
    await insertLegacy(org, big);
    let statements = 0;
    const first = await deleteExpiredTraces(sql, { days: 365, batchSize: 2, shouldStop: () => statements++ >= 1 });
    expect(first).toMatchObject({ spans: 2, statements: 1 });
    // The recent child went first; what remains still holds the trace's oldest spans.
    const remaining = await storedIds(org);
    expect(remaining).toHaveLength(3);
    expect(remaining).not.toContain(big[big.length - 1].trace_id);
    expect(remaining).toContain(big[0].trace_id);

    expect((await deleteExpiredTraces(sql, { days: 365, batchSize: 2 })).spans).toBe(3);
    expect(await storedIds(org)).toEqual([]);
  });
});

describe('the retention job', () => {
  const log = pino({ level: 'silent' });

  /**
   * Starts the workers on `prefix` with `env`, then closes them (close waits for the scheduler update);
   * answers their queues and what they logged about retention.
   */
  async function runWorkerOnce(prefix: string, env: Record<string, string>) {
    const workerSql = createSql(databaseUrl(), { max: 2 });
    const workerRedis = testRedis();
    const lines: { msg: string; retentionDays?: number | null }[] = [];
    const capture = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
    const workerLog = pino({ level: 'info' }, capture);
    const workers = startWorkers({
      sql: workerSql,
      redis: workerRedis,
      env: parseEnv(WorkerEnv, { DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl(), QUEUE_PREFIX: prefix, ...env }),
      log: workerLog,
      providerEnv: {},
    });
    await workers.close();
    await Promise.all([workerRedis.quit(), workerSql.end()]);
    const said = lines.find((l) => l.msg.startsWith('retention '));
    return { names: workers.names, retention: said && { msg: said.msg, days: said.retentionDays } };
  }

  it('is off by default; a worker started without RETENTION_DAYS leaves the schedule alone, and 0 removes it', async () => {
    const prefix = uniquePrefix('retention');
    const queue = createProducer('retention', redis, prefix);
    try {
      // Every worker runs retention jobs; without a schedule there are none.
      const first = await runWorkerOnce(prefix, {});
      expect(first.names).toContain('retention');
      expect(first.retention).toEqual({ msg: 'retention off', days: null });
      expect(await queue.queue.getJobSchedulersCount()).toBe(0);
      // The span tables' statistics, on the other hand, are always kept fresh (see test/db/statistics).
      expect(first.names).toContain('statistics');
      const statistics = createProducer('statistics', redis, prefix);
      expect(await statistics.queue.getJobScheduler('statistics')).toMatchObject({
        every: 30_000,
        template: { data: { min_changed_rows: 10_000 } },
      });
      await statistics.queue.obliterate({ force: true });
      await statistics.close();

      // A century: the run the scheduler starts at once finds nothing in the shared database.
      expect((await runWorkerOnce(prefix, { RETENTION_DAYS: '36500', RETENTION_BATCH_SIZE: '123' })).retention).toEqual(
        { msg: 'retention on', days: 36500 },
      );
      const expected = { every: 600_000, template: { data: { retention_days: 36500, batch_size: 123 } } };
      expect(await queue.queue.getJobScheduler('retention')).toMatchObject(expected);

      // A worker deployed without the variable (a rolling update, a forgotten host) changes nothing, and
      // says which setting is in force.
      expect((await runWorkerOnce(prefix, {})).retention).toEqual({ msg: 'retention on', days: 36500 });
      expect(await queue.queue.getJobScheduler('retention')).toMatchObject(expected);

      expect((await runWorkerOnce(prefix, { RETENTION_DAYS: '0' })).retention).toEqual({
        msg: 'retention off',
        days: null,
      });
      expect(await queue.queue.getJobSchedulersCount()).toBe(0);
    } finally {
      await queue.queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('removes expired traces written through the API once a worker runs with RETENTION_DAYS', async () => {
    const stack = await buildStack();
    const workerSql = createSql(databaseUrl(), { max: 2 });
    const workerRedis = testRedis();
    let retentionWorkers: ReturnType<typeof startWorkers> | undefined;
    try {
      const org = await newOrganization(sql, 'scheduled');
      const [oldRoot, oldChild, newRoot] = [randomUUID(), randomUUID(), randomUUID()];
      for (const body of [
        { trace_id: oldRoot, project_name: 'retention', trace_name: 'old' },
        {
          trace_id: oldChild,
          root_trace_id: oldRoot,
          parent_trace_id: oldRoot,
          project_name: 'retention',
          trace_name: 'old child',
        },
        { trace_id: newRoot, project_name: 'retention', trace_name: 'new' },
      ])
        expect((await call(stack.app, org.key, 'POST', '/trace_log', body)).statusCode).toBe(200);
      // Every span is stored before the old trace moves: a span-write batch committed after the move would
      // leave its span in today's partition (the span writers run batches side by side, in any order).
      for (const id of [oldRoot, oldChild, newRoot])
        expect((await readTrace(stack.app, org.key, id)).statusCode).toBe(200);
      // The old trace was first stored 400 days ago: it moves to that day's partition.
      const oldDay = new Date(Date.now() - 400 * DAY);
      await ensureSpanPartitions(sql, { from: oldDay, to: oldDay });
      await sql`update spans set part_at = ${oldDay} where organization_id = ${org.id} and root_trace_id = ${oldRoot}`;
      await sql`update span_parts set part_at = ${oldDay} where organization_id = ${org.id} and trace_id in ${sql([oldRoot, oldChild])}`;

      retentionWorkers = startWorkers({
        sql: workerSql,
        redis: workerRedis,
        env: parseEnv(WorkerEnv, {
          DATABASE_URL: databaseUrl(),
          REDIS_URL: redisUrl(),
          QUEUE_PREFIX: stack.prefix,
          RETENTION_DAYS: '365',
          RETENTION_BATCH_SIZE: '1',
        }),
        log,
        providerEnv: {},
      });
      // A scheduler with a fixed interval runs its first job at once.
      let ids = await storedIds(org.id);
      for (let i = 0; i < 200 && ids.length > 1; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        ids = await storedIds(org.id);
      }
      expect(ids).toEqual([newRoot]);
      expect((await readTrace(stack.app, org.key, oldRoot)).statusCode).toBe(404);
      expect((await readTrace(stack.app, org.key, newRoot)).statusCode).toBe(200);
    } finally {
      await retentionWorkers?.close();
      await Promise.all([workerRedis.quit(), workerSql.end()]);
      await stack.close();
    }
  });
});
