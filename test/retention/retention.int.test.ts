import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createSql, deleteExpiredTraces } from '@sightline/db';
import { createProducer } from '@sightline/queues';
import { parseEnv, WorkerEnv } from '@sightline/schemas';
import { startWorkers } from '@sightline/worker';
import { buildStack, call, readTrace } from '../support/app';
import { databaseUrl, newOrganization, redisUrl, testRedis, uniquePrefix, useServices } from '../support/services';

// Tests share one database: everything here is stored 400 days ago, so that a one-year retention removes
// these spans and nothing any other test wrote.
const AGE = '400 days';

const { sql, redis } = useServices();

type Row = { trace_id: string; root: string; parent?: string; created?: boolean; old: boolean };

async function insert(org: string, rows: Row[]) {
  for (const r of rows) {
    await sql`
      insert into spans (organization_id, trace_id, root_trace_id, parent_trace_id, created, created_at)
      values (${org}, ${r.trace_id}, ${r.root}, ${r.parent ?? r.root}, ${r.created ?? true},
              ${r.old ? sql`now() - ${AGE}::interval` : sql`now()`})`;
  }
}

async function storedIds(org: string): Promise<string[]> {
  return (
    await sql<{ trace_id: string }[]>`select trace_id from spans where organization_id = ${org} order by trace_id`
  ).map((r) => r.trace_id);
}

/** A trace: its root and `children` spans; `recentChild` adds one stored just now. */
function trace(old: boolean, children: number, recentChild = false): Row[] {
  const root = randomUUID();
  return [
    { trace_id: root, root, old },
    ...Array.from({ length: children }, () => ({ trace_id: randomUUID(), root, parent: root, old })),
    ...(recentChild ? [{ trace_id: randomUUID(), root, parent: root, old: false }] : []),
  ];
}

describe('deleteExpiredTraces', () => {
  it('removes whole expired traces in bounded statements and keeps the rest', async () => {
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
    await insert(org, [...expiredWithRecentChild, ...expired, ...kept, ...orphans, ...uncreated]);
    const removable = expiredWithRecentChild.length + expired.length + orphans.length + uncreated.length;

    const result = await deleteExpiredTraces(sql, { days: 365, batchSize: 2 });
    expect(result.spans).toBe(removable);
    // No statement removed more than 2 spans, so it took several.
    expect(result.statements).toBeGreaterThanOrEqual(Math.ceil(removable / 2));
    expect(await storedIds(org)).toEqual(kept.map((r) => r.trace_id).sort());

    // Nothing left to do: a second run removes nothing.
    expect((await deleteExpiredTraces(sql, { days: 365, batchSize: 2 })).spans).toBe(0);
  });

  it('leaves an interrupted trace findable: its newest spans go first, its oldest last', async () => {
    const org = (await newOrganization(sql, 'interrupted')).id;
    const big = trace(true, 3, true);
    await insert(org, big);
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
      for (const id of [oldChild, newRoot]) expect((await readTrace(stack.app, org.key, id)).statusCode).toBe(200);
      await sql`update spans set created_at = now() - ${AGE}::interval where organization_id = ${org.id} and root_trace_id = ${oldRoot}`;

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
