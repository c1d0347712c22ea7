import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseUrl, redisUrl, uniquePrefix } from '../support/services';
import { freePort, ROOT, runScript, startScript } from '../support/processes';
import { ManagedProcess, sleep } from '../support/private-services';

const env = () => ({ DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl(), LOG_LEVEL: 'info' });
// As the fault tests find it (test/support/private-services.ts).
const REDIS_SERVER = process.env.CHAOS_REDIS_SERVER ?? '/usr/bin/redis-server';
// The bound on a start-up that cannot reach a dependency.
const FAIL_FAST_MS = 10_000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  // SIGTERM, not SIGKILL: `npm start` passes it on to its processes, which a killed one would leave running.
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

/** startScript, with the process stopped after the file's tests whatever happens to them. */
async function start(...args: Parameters<typeof startScript>) {
  const started = await startScript(...args);
  children.push(started.child);
  return started;
}

/** A Redis of the test's own on `port`, which it stops and starts again under the processes. */
async function startRedis(
  port: number,
  dir = mkdtempSync(join(tmpdir(), 'sightline-start-up-')),
): Promise<ManagedProcess> {
  dirs.push(dir);
  // Kept on disk across the restart, as Redis must run under Sightline (docker-compose.yml): one that comes
  // back empty has lost the jobs the workers hold, which they then rightly report.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'];
  const redis = new ManagedProcess('redis', spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  await redis.waitForOutput(/Ready to accept connections/);
  return redis;
}

/** The JSON log lines of `output` whose message matches `msg`. */
const linesOf = (output: string, msg: RegExp) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; pid: number })
    .filter((line) => msg.test(line.msg));

async function stop(child: ChildProcess) {
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  return exited;
}

describe('npm start at start-up', () => {
  it('exits within 10 s with one plain line when Redis cannot be reached', async () => {
    const port = await freePort();
    const started = Date.now();
    const result = await runScript('scripts/start.ts', [], { ...env(), REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toBe(
      `cannot reach Redis at redis://127.0.0.1:${port} (set REDIS_URL): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
    expect(result.stdout).toBe(''); // checked before migrating
  });

  it('exits within 10 s with one plain line, without the credentials, when PostgreSQL cannot be reached', async () => {
    const port = await freePort();
    const started = Date.now();
    const result = await runScript('scripts/start.ts', [], {
      ...env(),
      DATABASE_URL: `postgres://sightline-user:hunter2-secret@127.0.0.1:${port}/sightline`,
    });
    expect(Date.now() - started).toBeLessThan(FAIL_FAST_MS);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toBe(
      `cannot reach PostgreSQL at postgres://127.0.0.1:${port}/sightline (set DATABASE_URL): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
    expect(result.stdout + result.stderr).not.toMatch(/hunter2|sightline-user/);
  });

  it('says once, not once per API process, where the console, the API, OTLP and the docs are, and serves OTLP/gRPC from each', async () => {
    const port = await freePort();
    const grpcPort = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { child, output } = await start(
      'scripts/start.ts',
      {
        ...env(),
        START_ROLE: 'api',
        API_PROCESSES: '2',
        PORT: String(port),
        OTLP_GRPC_PORT: String(grpcPort),
        QUEUE_PREFIX: uniquePrefix('urls'),
      },
      /(OTLP\/gRPC traces on[\s\S]*){2}/,
    );
    await expect.poll(() => linesOf(output(), /^API docs:/).length).toBe(1);
    expect(linesOf(output(), /listening on/)).toHaveLength(2);
    for (const expected of [
      `console: ${base}/`,
      `API for the client libraries: ${base}/api/svc/v1`,
      `API docs: ${base}/docs`,
    ])
      expect(linesOf(output(), /./).filter((line) => line.msg === expected)).toHaveLength(1);
    const otlp = linesOf(output(), /^OTLP\/HTTP traces:/);
    expect(otlp).toHaveLength(1);
    expect(otlp[0]!.msg).toContain(`${base}/v1/traces`);
    expect(otlp[0]!.msg).toContain(`${base}/api/svc/v1/otel/v1/traces`);
    expect(linesOf(output(), /^OTLP\/gRPC traces:/).map((line) => line.msg)).toEqual([
      expect.stringContaining(`OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:${grpcPort}`),
    ]);
    // Two channels, two connections, which the cluster hands to its processes in turn; each is answered as the
    // intake answers a request without a key.
    for (const channel of [0, 1]) {
      const client = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure(), {
        'grpc.channel_id': channel,
      });
      const error = await new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          new grpc.Metadata(),
          (err) => resolve(err),
        ),
      );
      client.close();
      expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    }
    expect(await stop(child)).toBe(0);
  });

  it("logs an API route's requests, and no info line for the console's files", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const { child, output } = await start(
      'apps/api/src/server.ts',
      { ...env(), PORT: String(port), QUEUE_PREFIX: uniquePrefix('files') },
      /listening on/,
    );
    // `npm test` builds the console first; the icon is served (or not found) at the files' level either way.
    const built = join(ROOT, 'apps/web/dist/assets');
    const asset = existsSync(built) ? readdirSync(built).find((name) => name.endsWith('.js')) : undefined;
    const files = ['/favicon.svg', ...(asset ? [`/assets/${asset}`] : [])];
    for (const file of files) await (await fetch(`${base}${file}`)).arrayBuffer();
    // Asked after the files: once its line is out, theirs would be too.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await expect.poll(() => output()).toMatch(/"url":"\/healthz"[\s\S]*"msg":"request completed"/);
    for (const file of files) expect(output()).not.toContain(`"url":"${file}"`);
    expect(await stop(child)).toBe(0);
  });
});

describe('a Redis lost after start-up', () => {
  it('is reported once when lost and once when back by the API and the worker, not at every attempt', async () => {
    const redisPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'sightline-start-up-'));
    let redis = await startRedis(redisPort, dir);
    const { child, output } = await start(
      'scripts/start.ts',
      {
        ...env(),
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        PORT: String(await freePort()),
        QUEUE_PREFIX: uniquePrefix('lost'),
      },
      /listening on[\s\S]*worker started|worker started[\s\S]*listening on/,
      60_000,
    );
    try {
      await redis.signal('SIGTERM');
      await expect.poll(() => linesOf(output(), /^Redis unreachable at /).length, { timeout: 10_000 }).toBe(2);
      // ioredis retries every 2 s at most: several attempts, each of which used to write a line or more.
      await sleep(6000);
      redis = await startRedis(redisPort, dir);
      await expect.poll(() => linesOf(output(), /^Redis reachable again at /).length, { timeout: 15_000 }).toBe(2);

      const lost = linesOf(output(), /^Redis unreachable at /);
      expect(lost).toHaveLength(2); // the API process and the worker process, once each
      expect(new Set(lost.map((line) => line.pid)).size).toBe(2);
      expect(lost[0]!.msg).toBe(`Redis unreachable at redis://127.0.0.1:${redisPort}; retrying`);
      expect(output().match(/ECONNREFUSED/g)?.length ?? 0).toBeLessThanOrEqual(lost.length);
      expect(output()).not.toMatch(/worker error|Unhandled error event/);
      expect(await stop(child)).toBe(0);
    } finally {
      redis.forceStop();
    }
  }, 90_000);

  it('does not hold the worker on SIGTERM', async () => {
    const redisPort = await freePort();
    const redis = await startRedis(redisPort);
    const { child, output } = await start(
      'apps/worker/src/main.ts',
      { ...env(), REDIS_URL: `redis://127.0.0.1:${redisPort}`, QUEUE_PREFIX: uniquePrefix('sigterm') },
      /worker started/,
    );
    try {
      await redis.signal('SIGTERM');
      await expect.poll(() => output(), { timeout: 10_000 }).toMatch(/Redis unreachable at/);
      const signalled = Date.now();
      expect(await stop(child)).toBe(0);
      // Well within the drain deadline (20 s): no job in hand can finish without Redis, so none is waited for.
      expect(Date.now() - signalled).toBeLessThan(20_000);
      expect(output()).toMatch(/"msg":"shut down"/);
      expect(output()).not.toMatch(/did not finish in time|deadline passed/);
    } finally {
      redis.forceStop();
    }
  }, 60_000);
});

describe('the logs', () => {
  // The processes' logger, as a person at a terminal sees it and as a collector reads it.
  const program = `import('@sightline/runtime').then((r) => r.createLogger('tty-test', 'info').info('hello from a terminal'))`;
  const command = `${process.execPath} --import tsx -e "${program}"`;
  const run = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(args[0]!, args.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
    });

  it('are readable lines on a terminal, and JSON lines otherwise', async () => {
    // `script` runs the command on a pseudo-terminal of its own.
    const onTerminal = await run(['script', '-qec', command, '/dev/null']);
    expect(onTerminal).toMatch(/INFO.*tty-test.*hello from a terminal/);
    expect(onTerminal).not.toContain('"msg"');
    const piped = await run(['bash', '-c', command]);
    expect(JSON.parse(piped.trim())).toMatchObject({ name: 'tty-test', msg: 'hello from a terminal' });
  });
});
