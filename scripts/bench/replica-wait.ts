// Benchmark: what `REDIS_WAIT_REPLICAS=1` costs a span write. A Redis of its own with one replica (both
// redis-server processes on free ports), and two Sightlines on it, one answering once the master holds a
// write's job, the other once the replica does too (WAIT). Measured in the same run, round by round:
//   - one request at a time (`POST /trace_log`, a span each): what the wait adds to a request's latency;
//   - 16 connections at full speed: what it costs in throughput, where concurrent requests share jobs;
//   - the floor: a write and a `WAIT 1` straight to Redis, against the write alone, from this process.
// Writes bench/results/replica-wait.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { load, timeSequential } from './lib/load';
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { spanBodies, tracePool } from './lib/spans';
import { createBenchStack, freePort, type BenchStack } from './lib/stack';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Debian's, as the fault tests use.
const REDIS_SERVER = process.env.CHAOS_REDIS_SERVER ?? '/usr/bin/redis-server';
const SEQUENTIAL = Number(process.env.BENCH_REQUESTS ?? 500);
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

const dir = mkdtempSync(join(tmpdir(), 'sightline-bench-replica-'));
const children: ChildProcess[] = [];
process.once('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

async function redisServer(port: number, ...args: string[]): Promise<void> {
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--dbfilename', `${port}.rdb`, ...args],
    {
      stdio: 'ignore',
    },
  );
  children.push(child);
  for (;;) {
    const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null });
    redis.on('error', () => {});
    const up = await redis.connect().then(
      () => true,
      () => false,
    );
    redis.disconnect();
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const masterPort = await freePort();
const replicaPort = await freePort();
await redisServer(masterPort);
await redisServer(replicaPort, '--replicaof', '127.0.0.1', String(masterPort));
const master = new Redis(masterPort, '127.0.0.1');
const replica = new Redis(replicaPort, '127.0.0.1');
while (!/master_link_status:up/.test(await replica.info('replication'))) await new Promise((r) => setTimeout(r, 100));
replica.disconnect();

const REDIS_URL = `redis://127.0.0.1:${masterPort}`;
const stackOf = async (wait: number, port: number) => {
  const env = { REDIS_URL, REDIS_WAIT_REPLICAS: String(wait) };
  const stack = await createBenchStack({ port, apiEnv: env, workerEnv: env });
  await stack.start();
  return stack;
};
const alone = await stackOf(0, await freePort());
const waited = await stackOf(1, await freePort());

const pool = tracePool('replica-wait', 500);
async function measure(stack: BenchStack) {
  const body = spanBodies(pool);
  const request = { url: `${stack.base}/trace_log`, method: 'POST' as const, headers: stack.headers };
  const sequential = [];
  for (let i = 0; i < SEQUENTIAL; i++) sequential.push(...(await timeSequential({ ...request, body: body() }, 1)));
  const loaded = await load({ ...request, connections: 16, durationSec: LOAD_SECONDS, body });
  return {
    p50_ms: median(sequential),
    p99_ms: quantile(sequential, 0.99),
    per_sec_16: loaded.okPerSec,
    non2xx: loaded.non2xx,
  };
}

/** A SET, then WAIT 1 on the same connection, against the SET alone: the hop the wait adds, with nothing around it. */
async function floor() {
  const time = async (withWait: boolean) => {
    const ms: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const t0 = performance.now();
      await master.set('bench:replica-wait', String(i));
      if (withWait) await master.wait(1, 1000);
      ms.push(performance.now() - t0);
    }
    return median(ms);
  };
  const write = await time(false);
  const waitedWrite = await time(true);
  return { write_p50_ms: write, write_and_wait_p50_ms: waitedWrite };
}

type Round = {
  alone: Awaited<ReturnType<typeof measure>>;
  waited: Awaited<ReturnType<typeof measure>>;
  floor: Awaited<ReturnType<typeof floor>>;
};
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  // Alternated, so that a change in the machine's speed during the run falls on both.
  const a = await measure(alone);
  const w = await measure(waited);
  const f = await floor();
  rounds.push({ alone: a, waited: w, floor: f });
  console.log(`round ${r + 1}: ${JSON.stringify(rounds.at(-1))}`);
}

const med = (pick: (r: Round) => number) => median(rounds.map(pick));
const spread = (pick: (r: Round) => number) => {
  const xs = rounds.map(pick);
  return `${round(Math.min(...xs), 2)}–${round(Math.max(...xs), 2)}`;
};
const added = (r: Round) => r.waited.p50_ms - r.alone.p50_ms;
const floorAdded = (r: Round) => r.floor.write_and_wait_p50_ms - r.floor.write_p50_ms;
const summary: Row[] = [
  {
    figure: 'p50 of one span write, master only (ms)',
    value: `${round(
      med((r) => r.alone.p50_ms),
      2,
    )} (${spread((r) => r.alone.p50_ms)})`,
  },
  {
    figure: 'p50 of one span write, REDIS_WAIT_REPLICAS=1 (ms)',
    value: `${round(
      med((r) => r.waited.p50_ms),
      2,
    )} (${spread((r) => r.waited.p50_ms)})`,
  },
  { figure: 'added by the wait, p50 (ms)', value: `${round(med(added), 2)} (${spread(added)})` },
  {
    figure: 'floor: WAIT 1 after a write, straight to Redis, added p50 (ms)',
    value: `${round(med(floorAdded), 3)} (${spread(floorAdded)})`,
  },
  {
    figure: 'span writes/s at 16 connections, master only',
    value: `${round(
      med((r) => r.alone.per_sec_16),
      0,
    )} (${spread((r) => r.alone.per_sec_16)})`,
  },
  {
    figure: 'span writes/s at 16 connections, REDIS_WAIT_REPLICAS=1',
    value: `${round(
      med((r) => r.waited.per_sec_16),
      0,
    )} (${spread((r) => r.waited.per_sec_16)})`,
  },
];
writeResult({ benchmark: 'replica-wait', summary, rounds, requests_per_round: SEQUENTIAL, load_seconds: LOAD_SECONDS });

await Promise.all([alone.stop(), waited.stop()]);
master.disconnect();
for (const child of children) child.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
