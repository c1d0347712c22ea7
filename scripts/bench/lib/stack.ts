// A private Sightline for one benchmark: its own database and queue prefix on the local PostgreSQL and
// Redis, and the real API and worker processes, so figures include every hop a user's request takes.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { addApiKey, createSql, ensureOrganization, migrate, type Sql } from '@sightline/db';
import { spanShards } from '@sightline/queues';
import { connectRedis, spanShardPrefixes } from '@sightline/runtime';
import { BaseEnv } from '@sightline/schemas';
import { ensureServerBuilt, serverEntry, serverEnv } from '../../build-server';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Peak resident memory (VmHWM) of a process, in MB. */
export const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** Current resident memory (VmRSS) of a process, in MB. */
export const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export function spawnNode(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
  nodeArgs: string[] = [],
): ChildProcess {
  return spawnWith([...nodeArgs, '--import', 'tsx', script, ...args], env);
}

/** A process of the built server (scripts/build-server.ts), as `npm start` runs it. */
function spawnServer(name: 'api' | 'worker', env: Record<string, string>, nodeArgs: string[] = []): ChildProcess {
  return spawnWith([...nodeArgs, serverEntry(name)], { ...serverEnv(name), ...env });
}

function spawnWith(argv: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Starts a script of the benchmarks' own (a fake upstream, the queue floor) that prints one JSON line once it
 * is ready; resolves with that line. A benchmark that fails does not leave it running.
 */
export async function startReporting<T>(script: string, args: string[]): Promise<{ child: ChildProcess; report: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.exitCode === null && child.kill('SIGKILL'));
  const line = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${script} ${args.join(' ')} did not start`)), 20_000),
    ),
  ]);
  return { child, report: JSON.parse(line) as T };
}

/** A TCP port nothing listens on now, so that benchmarks run side by side do not collide. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Node flags for a benchmark's API or worker processes from the environment (`BENCH_API_NODE_ARGS`,
 * `BENCH_WORKER_NODE_ARGS`, split at spaces), to profile any benchmark: `--cpu-prof --cpu-prof-dir=...`.
 */
const profileArgs = (role: 'API' | 'WORKER') => process.env[`BENCH_${role}_NODE_ARGS`]?.split(' ').filter(Boolean);

export type BenchStack = Awaited<ReturnType<typeof createBenchStack>>;

/**
 * Creates the database (migrated, with an organization and key) and the queue prefix. `start()` runs
 * API and worker processes; a benchmark that seeds data first calls it after seeding.
 */
export async function createBenchStack(
  options: {
    port?: number;
    apiEnv?: Record<string, string>;
    workerEnv?: Record<string, string>;
    apiNodeArgs?: string[];
    workerNodeArgs?: string[];
    /** API processes run as `npm start` runs them (a cluster sharing the port); unset: server.ts alone. */
    apiProcesses?: number;
    workerProcesses?: number;
    /** Worker n serves its metrics on workerMetricsPort + n. */
    workerMetricsPort?: number;
    /** A Redis Cluster's nodes (REDIS_CLUSTER_NODES) instead of the machine's Redis, with its span-write shards. */
    redisCluster?: { nodes: string; spanWriteShards: number };
    /** Migrations applied up to this one only; `migrate()` applies the rest (after seeding, as an upgrade would). */
    migrateUpTo?: number;
  } = {},
) {
  const tag = randomBytes(3).toString('hex');
  const database = `sightline_bench_${tag}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`;
  const prefix = `bench-${tag}`;
  const key = `sl-bench-${randomBytes(8).toString('hex')}`;
  const port = options.port ?? 8190;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${database}"`);
  await migrate(databaseUrl, undefined, { upTo: options.migrateUpTo });
  const sql: Sql = createSql(databaseUrl, { max: 4 });
  const organizationId = await ensureOrganization(sql, 'bench');
  await addApiKey(sql, organizationId, key);
  const cluster = options.redisCluster;
  const redisEnv: Record<string, string> = cluster
    ? {
        REDIS_URL: 'redis://127.0.0.1:1',
        REDIS_CLUSTER_NODES: cluster.nodes,
        SPAN_WRITE_SHARDS: String(cluster.spanWriteShards),
      }
    : { REDIS_URL };
  const target = BaseEnv.pick({
    REDIS_URL: true,
    REDIS_CLUSTER_NODES: true,
    QUEUE_PREFIX: true,
    SPAN_WRITE_SHARDS: true,
  }).parse({ ...redisEnv, QUEUE_PREFIX: prefix });
  const redis = connectRedis(target);
  const children: ChildProcess[] = [];
  // A benchmark that fails must not leave its API and worker running.
  process.once('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
  // OTLP/gRPC only where a benchmark asks for it (apiEnv): two stacks may run at once.
  const env = { DATABASE_URL: databaseUrl, QUEUE_PREFIX: prefix, OTLP_GRPC_PORT: '0', ...redisEnv };
  let api: ChildProcess | undefined;
  const workers: ChildProcess[] = [];

  return {
    database,
    databaseUrl,
    prefix,
    /** Applies the migrations past `migrateUpTo`. */
    migrate: () => migrate(databaseUrl),
    key,
    organizationId,
    sql,
    redis,
    /** The span-write shards, as the API and the workers see them. */
    shards: spanShards(spanShardPrefixes(target)),
    base: `http://127.0.0.1:${port}/api/svc/v1`,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    /** The API process, or with `apiProcesses`, the cluster's primary. */
    get apiPid() {
      return api!.pid!;
    },
    /** Every API process that serves requests (the primary only hands out connections). */
    apiPids(): number[] {
      if (!options.apiProcesses) return [api!.pid!];
      return execSync(`pgrep -P ${api!.pid} || true`).toString().split('\n').filter(Boolean).map(Number);
    },
    get workerPid() {
      return workers[0].pid!;
    },
    workerPids: () => workers.map((w) => w.pid!),
    /** Starts the API and (unless `worker: false`) the worker, and waits until the API answers. */
    async start({ worker: withWorker = true }: { worker?: boolean } = {}) {
      const apiEnv = { ...env, PORT: String(port), ...options.apiEnv };
      await ensureServerBuilt();
      api = options.apiProcesses
        ? spawnNode('scripts/start.ts', { ...apiEnv, START_ROLE: 'api', API_PROCESSES: String(options.apiProcesses) })
        : spawnServer('api', apiEnv, options.apiNodeArgs ?? profileArgs('API'));
      children.push(api);
      if (withWorker) await this.startWorker();
      await waitForHttp(`http://127.0.0.1:${port}/healthz`);
      // Every process of the cluster is up, not just the first one that answered.
      while (this.apiPids().length < (options.apiProcesses ?? 1)) await new Promise((r) => setTimeout(r, 100));
    },
    async startWorker() {
      for (let n = 0; n < (options.workerProcesses ?? 1); n++) {
        const metrics: Record<string, string> = options.workerMetricsPort
          ? { METRICS_PORT: String(options.workerMetricsPort + n) }
          : {};
        const worker = spawnServer(
          'worker',
          { ...env, ...options.workerEnv, ...metrics },
          options.workerNodeArgs ?? profileArgs('WORKER'),
        );
        workers.push(worker);
        children.push(worker);
      }
      await new Promise((r) => setTimeout(r, 1500));
    },
    /** Stops the processes, drops the database and removes the Redis keys. */
    async stop() {
      for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
      await sql.end();
      await admin.unsafe(`drop database if exists "${database}" with (force)`);
      await admin.end();
      // A cluster is the benchmark's own, and goes with it.
      if (!cluster)
        for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }))
          if (keys.length) await redis.unlink(...(keys as string[]));
      await redis.quit();
    },
  };
}
