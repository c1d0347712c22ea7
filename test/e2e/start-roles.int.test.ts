import { type ChildProcess, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseUrl, redisUrl, testRedis, uniquePrefix } from '../support/services';
import { freePort, runScript, startScript as startChild } from '../support/processes';

const env = () => ({ DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl(), LOG_LEVEL: 'info' });

async function stop(child: ChildProcess) {
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

// Every `npm start` a test started is stopped after it, also when an assertion failed before the test's own stop:
// its API and workers would otherwise stay running, holding their ports and queues.
const started: ChildProcess[] = [];
const startScript = async (...args: Parameters<typeof startChild>) => {
  const run = await startChild(...args);
  started.push(run.child);
  return run;
};
afterEach(async () => {
  await Promise.all(started.splice(0).flatMap((c) => (c.exitCode === null && c.signalCode === null ? [stop(c)] : [])));
});

describe('npm start roles and configuration', () => {
  it('START_ROLE=api runs only the API, and its BullMQ keys live under QUEUE_PREFIX', async () => {
    const prefix = uniquePrefix('role');
    const port = await freePort();
    const { child, output } = await startScript(
      'scripts/start.ts',
      {
        ...env(),
        START_ROLE: 'api',
        API_PROCESSES: '2',
        PORT: String(port),
        QUEUE_PREFIX: prefix,
        BOOTSTRAP_API_KEY: 'sl-role-test-key',
      },
      /(listening on[\s\S]*){2}/,
    );
    const res = await fetch(`http://127.0.0.1:${port}/api/svc/v1/trace_log`, {
      method: 'POST',
      headers: { 'x-api-key': 'sl-role-test-key', 'content-type': 'application/json' },
      body: JSON.stringify({ project_name: 'roles', trace_id: crypto.randomUUID() }),
    });
    expect(res.status).toBe(200);
    // Each API process runs with glibc's mmap threshold fixed (serverEnv, scripts/build-server.ts), which keeps an
    // export's large blocks from staying in the process after it (the export benchmark's memory target).
    const apis = execSync(`pgrep -P ${child.pid} -f dist/server/api.js`).toString().split('\n').filter(Boolean);
    expect(apis).toHaveLength(2);
    for (const pid of apis)
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    const redis = testRedis();
    const waiting = await redis.llen(`${prefix}:span-write:wait`);
    await redis.quit();
    expect(waiting).toBe(1); // no worker took it
    // Both API processes read the queue from Redis: the figure is the queue's, not the sum of their readings.
    const scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(scraped).toMatch(/^sightline_queue_depth\{queue="span-write"\} 1$/m);
    expect(await stop(child)).toBe(0);
    expect(output()).not.toMatch(/worker started/);
  });

  it('START_ROLE=worker runs only the worker', async () => {
    const { child, output } = await startScript(
      'scripts/start.ts',
      { ...env(), START_ROLE: 'worker', QUEUE_PREFIX: uniquePrefix('role') },
      /worker started/,
    );
    expect(await stop(child)).toBe(0);
    expect(output()).not.toMatch(/listening on/);
  });

  it('starts a process again when it dies after start-up', async () => {
    const { child, output } = await startScript(
      'scripts/start.ts',
      { ...env(), START_ROLE: 'worker', QUEUE_PREFIX: uniquePrefix('role') },
      /worker started/,
    );
    const pids = () => [...output().matchAll(/"pid":(\d+)[^\n]*"msg":"worker started"/g)].map((m) => Number(m[1]));
    const [first] = pids();
    // Only a process that ran past its start-up is restarted (one that fails at once would fail again).
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    process.kill(first, 'SIGKILL');
    for (let i = 0; i < 300 && pids().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pids()).toHaveLength(2);
    expect(output()).toMatch(/"role":"worker"[^\n]*"signal":"SIGKILL"[^\n]*"msg":"process exited; starting it again"/);
    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('runs API_PROCESSES API processes on one port, reporting their metrics together, and WORKER_PROCESSES workers', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const { child, output } = await startScript(
      'scripts/start.ts',
      {
        ...env(),
        API_PROCESSES: '2',
        WORKER_PROCESSES: '3',
        METRICS_PORT: String(metricsPort),
        PORT: String(port),
        QUEUE_PREFIX: uniquePrefix('procs'),
        BOOTSTRAP_API_KEY: 'sl-procs-test-key',
      },
      /(listening on[\s\S]*){2}/,
    );
    const pidsOf = (msg: string) =>
      new Set([...output().matchAll(new RegExp(`"pid":(\\d+)[^\\n]*"msg":"${msg}`, 'g'))].map((m) => m[1]));
    await expect.poll(() => pidsOf('worker started').size, { timeout: 20_000 }).toBe(3);
    expect(pidsOf('Sightline API listening').size).toBe(2);

    // Each request on a connection of its own: the primary hands connections to the processes in turn.
    const REQUESTS = 8;
    for (let i = 0; i < REQUESTS; i++) {
      const status = await new Promise((resolve, reject) =>
        get(
          `http://127.0.0.1:${port}/api/svc/v1/me`,
          { agent: false, headers: { 'x-api-key': 'sl-procs-test-key' } },
          (res) => res.resume().on('end', () => resolve(res.statusCode)),
        ).on('error', reject),
      );
      expect(status).toBe(200);
    }
    const served = new Set([...output().matchAll(/"pid":(\d+)[^\n]*"url":"\/api\/svc\/v1\/me"/g)].map((m) => m[1]));
    expect(served.size).toBe(2);
    // Whichever process answers the scrape, it counts the requests both served (each once its response has
    // gone out: on a loaded machine the last one may be counted a moment after the client has it).
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    await expect
      .poll(scrape, { timeout: 5000 })
      .toContain(
        `sightline_http_request_duration_seconds_count{method="GET",route="/api/svc/v1/me",status_code="200"} ${REQUESTS}`,
      );
    // Each worker serves its own metrics, on METRICS_PORT + n.
    for (const n of [0, 1, 2]) expect((await fetch(`http://127.0.0.1:${metricsPort + n}/metrics`)).status).toBe(200);
    expect(await stop(child)).toBe(0);
  }, 90_000);

  it('exits with a message naming a bad variable', async () => {
    const result = await runScript('scripts/start.ts', [], { ...env(), START_ROLE: 'api', PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Invalid environment:[\s\S]*PORT/);
  });
});
