import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApiKey, createSql, ensureOrganization, migrate, type Sql } from '@sightline/db';
import { buildStack, call, type TestStack } from '../support/app';
import { PrivatePostgres, sleep } from '../support/private-services';

// The console's heavy reads on a PostgreSQL streaming replica, against a real one: a primary and a replica
// of their own (initdb, pg_basebackup -R) on ports of their own, the machine's PostgreSQL untouched.

const PROJECT = 'replicated';

let dir: string;
let primary: PrivatePostgres;
let replica: PrivatePostgres;
let primarySql: Sql;
let replicaSql: Sql;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sightline-replicas-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user and must reach its directories inside this one
  primary = await PrivatePostgres.create(join(dir, 'primary'));
  await migrate(primary.url);
  primarySql = createSql(primary.url, { max: 1 });
  key = await addApiKey(primarySql, await ensureOrganization(primarySql, 'replicas'));
  replica = await primary.replica(join(dir, 'replica'));
  replicaSql = createSql(replica.url, { max: 1 });
});

afterAll(async () => {
  await Promise.all([replicaSql?.end({ timeout: 1 }), primarySql?.end({ timeout: 1 })]);
  replica?.process?.forceStop();
  primary?.process?.forceStop();
  await Promise.all([replica?.process?.exited, primary?.process?.exited]);
  rmSync(dir, { recursive: true, force: true });
});

/** A stack on the private primary with its replica; it checks the replica every 100 ms, runs monitors every second. */
function replicatedStack(maxLagMs: number) {
  const handle = {} as { stack: TestStack };
  beforeAll(async () => {
    handle.stack = await buildStack({
      env: {
        DATABASE_URL: primary.url,
        DATABASE_REPLICA_URLS: replica.url,
        DATABASE_REPLICA_MAX_LAG_MS: String(maxLagMs),
        DATABASE_REPLICA_CHECK_MS: '100',
        MONITOR_INTERVAL_SECONDS: '1',
      },
    });
  });
  afterAll(async () => handle.stack?.close());
  return handle;
}

async function writeTrace(stack: TestStack): Promise<string> {
  const trace_id = randomUUID();
  const res = await call(stack.app, key, 'POST', '/trace_log', { trace_id, project_name: PROJECT, trace_name: 'r' });
  expect(res.statusCode).toBe(200);
  return trace_id;
}

/** The console's listing of the project: one of the reads a replica may serve. */
async function consoleListing(stack: TestStack): Promise<string> {
  const res = await call(stack.app, key, 'POST', '/traces', { project_name: PROJECT, page_size: 100 });
  expect(res.statusCode).toBe(200);
  return res.body;
}

async function metric(stack: TestStack, line: RegExp): Promise<number> {
  const text = (await stack.app.inject({ url: '/metrics' })).body;
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? NaN : Number(found.split(' ').at(-1));
}
const replicaReads = (stack: TestStack) =>
  metric(stack, /^sightline_db_lag_tolerant_reads_total\{reads="console",served_by="replica"\}/);
const primaryReads = (stack: TestStack) =>
  metric(stack, /^sightline_db_lag_tolerant_reads_total\{reads="console",served_by="primary"\}/);
const serving = (stack: TestStack) => metric(stack, /^sightline_db_replica_serving\{reads="console",/);
const lagSeconds = (stack: TestStack) => metric(stack, /^sightline_db_replica_lag_seconds\{reads="console",/);

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Once the stack's replica serves reads (1) or is set aside (0). */
const servingBecomes = (stack: TestStack, state: 0 | 1, what: string) =>
  until(
    what,
    () => serving(stack),
    (v) => v === state,
  );

/**
 * Runs `work` with the replica's replay stopped, and resumes it whatever happens. A pause takes effect at the
 * replica's next WAL record, so it is waited for.
 */
async function whileReplayPaused<T>(work: () => Promise<T>): Promise<T> {
  await replicaSql`select pg_wal_replay_pause()`;
  try {
    const state = async () => (await replicaSql`select pg_get_wal_replay_pause_state() as state`)[0]!.state;
    await until('replay paused', state, (s) => s === 'paused');
    return await work();
  } finally {
    await replicaSql`select pg_wal_replay_resume()`;
  }
}

/** Once the worker has committed the trace on the primary. */
async function storedOnPrimary(traceId: string) {
  const count = async () => (await primarySql`select count(*)::int as n from spans where trace_id = ${traceId}`)[0]!.n;
  await until('the trace stored on the primary', count, (n) => n === 1);
}

/** A monitor that fires when most of the project's traces in the last hour failed, with 4 at least. */
async function errorRateMonitor(stack: TestStack, project: string): Promise<string> {
  const res = await call(stack.app, key, 'POST', '/monitors', {
    name: `errors-${randomUUID()}`,
    project_name: project,
    metric: 'error_rate',
    window_minutes: 60,
    condition: { above: 0.5 },
    min_samples: 4,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

/** Four failed traces in the project, once the worker has stored them on the primary. */
async function failedTraces(stack: TestStack, project: string) {
  const trace_logs = Array.from({ length: 4 }, () => ({
    trace_id: randomUUID(),
    project_name: project,
    trace_name: 'answer',
    start_timestamp: new Date().toISOString(),
    status: 'error',
    error: 'the model timed out',
  }));
  const res = await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs });
  expect(res.statusCode, res.body).toBe(200);
  for (const t of trace_logs) await storedOnPrimary(t.trace_id);
}

/** A monitor's state once the worker has evaluated it at least once since `since` (epoch ms). */
async function evaluatedSince(monitorId: string, since: number): Promise<string> {
  const row = async () =>
    (
      await primarySql<{ state: string; at: Date | null }[]>`
      select state, last_evaluated_at as at from monitors where id = ${monitorId}`
    )[0]!;
  return (await until('the monitor evaluated', row, (m) => m.at !== null && m.at.getTime() > since)).state;
}

describe('a replica that may lag a minute: the console reads it, the clients read the primary', () => {
  const handle = replicatedStack(60_000);

  it('serves the console from the replica, and read-your-writes from the primary while the replica is stale', async () => {
    const { stack } = handle;
    await servingBecomes(stack, 1, 'the replica taken into service');
    const before = await replicaReads(stack);
    const first = await writeTrace(stack);
    await until(
      'the first trace on the console',
      () => consoleListing(stack),
      (body) => body.includes(first),
    );
    expect(await replicaReads(stack)).toBeGreaterThan(before);

    // Replay stopped: the replica still answers, older by a second or so each second.
    await whileReplayPaused(async () => {
      const second = await writeTrace(stack);
      await storedOnPrimary(second);
      // Everything that promises read-your-writes sees it at once.
      const read = await call(stack.app, key, 'GET', `/trace_log/${second}`);
      expect(read.statusCode).toBe(200);
      expect(read.json().trace_id).toBe(second);
      const listed = await call(stack.app, key, 'POST', '/get_trace_logs', { project_name: PROJECT });
      expect(listed.body).toContain(second);
      // Let the replica fall behind by more than one check, then look: the console, within its bound of a
      // minute, is served the replica's older picture.
      await until(
        'the replica measured behind',
        () => lagSeconds(stack),
        (lag) => lag >= 0.5,
      );
      const served = await replicaReads(stack);
      const stale = await consoleListing(stack);
      expect(stale).toContain(first);
      expect(stale).not.toContain(second);
      expect(await replicaReads(stack)).toBe(served + 1);
    });
    await until(
      'the lag back to 0',
      () => lagSeconds(stack),
      (lag) => lag === 0,
    );
  });

  it("reads a monitor's metric on the replica: the worker judges what the replica has replayed", async () => {
    const { stack } = handle;
    await servingBecomes(stack, 1, 'the replica in service');
    const project = `monitored-${randomUUID()}`;
    const monitor = await whileReplayPaused(async () => {
      await failedTraces(stack, project);
      const monitor = await errorRateMonitor(stack, project);
      // The primary holds four failures; the replica, a minute's bound from being set aside, none yet.
      expect(await evaluatedSince(monitor, Date.now())).toBe('no_data');
      return monitor;
    });
    await until(
      'the monitor firing once the replica has replayed the failures',
      () => evaluatedSince(monitor, Date.now()),
      (state) => state === 'firing',
    );
  });
});

describe('a replica allowed 1 s behind: set aside while it lags, and while it is gone', () => {
  const handle = replicatedStack(1_000);

  it('moves the console to the primary once the replica falls behind, and back once it catches up', async () => {
    const { stack } = handle;
    await servingBecomes(stack, 1, 'the replica taken into service');
    const written = await whileReplayPaused(async () => {
      const written = await writeTrace(stack);
      await storedOnPrimary(written);
      // Within the bound the replica may still answer without it; past it, the primary answers with it.
      await servingBecomes(stack, 0, 'the replica set aside');
      expect(await lagSeconds(stack)).toBeGreaterThan(1);
      const before = await primaryReads(stack);
      expect(await consoleListing(stack)).toContain(written);
      expect(await primaryReads(stack)).toBe(before + 1);
      return written;
    });
    await servingBecomes(stack, 1, 'the replica back in service');
    const before = await replicaReads(stack);
    expect(await consoleListing(stack)).toContain(written);
    expect(await replicaReads(stack)).toBe(before + 1);
  });

  it("reads a monitor's metric on the primary while the replica is further behind than its bound", async () => {
    const { stack } = handle;
    await servingBecomes(stack, 1, 'the replica in service');
    const project = `monitored-${randomUUID()}`;
    await whileReplayPaused(async () => {
      await failedTraces(stack, project);
      await servingBecomes(stack, 0, 'the replica set aside');
      const monitor = await errorRateMonitor(stack, project);
      expect(await evaluatedSince(monitor, Date.now())).toBe('firing');
    });
  });

  it('answers every console read while the replica is stopped and started again, none with a 5xx', async () => {
    const { stack } = handle;
    await servingBecomes(stack, 1, 'the replica in service');
    const written = await writeTrace(stack);
    await until(
      'the trace on the console',
      () => consoleListing(stack),
      (body) => body.includes(written),
    );

    // Reads keep coming while the replica crashes: those that were sent to it are answered by the primary.
    let reading = true;
    const answers: { status: number; listed: boolean }[] = [];
    const reader = (async () => {
      while (reading) {
        const res = await call(stack.app, key, 'POST', '/traces', { project_name: PROJECT, page_size: 100 });
        answers.push({ status: res.statusCode, listed: res.body.includes(written) });
      }
    })();
    try {
      await replica.stop('immediate');
      await until(
        'the replica set aside, its lag unknown',
        () => lagSeconds(stack),
        (lag) => lag === -1,
      );
      expect(await serving(stack)).toBe(0);
      const whileGone = answers.length;
      await until(
        'reads answered while it is gone',
        async () => answers.length,
        (n) => n >= whileGone + 5,
      );
      await replica.start();
      await servingBecomes(stack, 1, 'the replica back in service');
    } finally {
      reading = false;
      await reader;
    }
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.filter((a) => a.status !== 200 || !a.listed)).toEqual([]);
  });
});
