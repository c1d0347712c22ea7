// Benchmark: finishing an experiment of 100k root traces (1M spans), and the latency of other API
// requests while it runs. Seeds its own database, runs the real API and worker processes, and writes
// bench/results/experiment-finish.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { addApiKey, createSql, ensureOrganization, getOrCreateProject, migrate } from '@sightline/db';

const ROOTS = Number(process.env.BENCH_ROOTS ?? 100_000);
const CHILDREN = Number(process.env.BENCH_CHILDREN ?? 9);
const PORT = Number(process.env.BENCH_PORT ?? 8190);
const STALLED_READERS = 12;
const root = fileURLToPath(new URL('../..', import.meta.url));
const database = `sightline_bench_${randomBytes(3).toString('hex')}`;
const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${database}`;
const key = `sl-bench-${randomBytes(8).toString('hex')}`;
const base = `http://127.0.0.1:${PORT}/api/svc/v1`;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const round = (x: number) => Math.round(x * 10) / 10;

function start(role: 'api' | 'worker', prefix: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `apps/${role === 'api' ? 'api/src/server.ts' : 'worker/src/main.ts'}`], {
      cwd: root,
      env: { ...process.env, DATABASE_URL, QUEUE_PREFIX: prefix, PORT: String(PORT), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
    setTimeout(() => resolve(child), 4000);
  });
}
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Lists experiments (a real, authenticated query) in a loop, recording each latency, until stopped. */
function prober(url: string) {
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      const res = await fetch(url, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`probe answered ${res.status}`);
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return { latencies, stop: async () => ((running = false), await done) };
}

/** Clients that request the stats and then read nothing: they must not hold the API's connections. */
function stalledReaders(url: string, count: number) {
  return Array.from({ length: count }, () => {
    const controller = new AbortController();
    fetch(url, { headers: { 'x-api-key': key }, signal: controller.signal }).catch(() => {});
    return controller;
  });
}

await migrate(DATABASE_URL);
const sql = createSql(DATABASE_URL);
const org = await ensureOrganization(sql, 'bench');
await addApiKey(sql, org, key);
const project = await getOrCreateProject(sql, org, 'bench');
const [{ uuid: experiment }] = await sql`insert into experiments (organization_id, project_id, name, run_name) values (${org}, ${project.uuid}, 'bench', 'bench') returning uuid`;

let t = performance.now();
// Roots carry the experiment and two scores; children carry the LLM usage.
await sql`
  insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                     trace_name, start_ts, latency, experiment_uuid, scores, versions)
  select ${org}::uuid, id, ${project.uuid}::uuid, id, id, true, 0, 0, 'case', now() - i * interval '1 ms', random() * 3,
         ${experiment}::uuid, jsonb_build_array(jsonb_build_object('name', 'accuracy', 'score', (i % 2)), jsonb_build_object('name', 'f1', 'score', random())), '{}'
  from (select gen_random_uuid() as id, i from generate_series(1, ${ROOTS}) i) g`;
await sql`
  insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, execution_order,
                     trace_name, input_tokens, output_tokens, total_tokens, cost, versions)
  select ${org}::uuid, gen_random_uuid(), ${project.uuid}::uuid, r.trace_id, r.trace_id, true, 1, c, 'llm', 100, 20, 120, 0.0005, '{}'
  from spans r cross join generate_series(1, ${CHILDREN}) c
  where r.organization_id = ${org} and r.experiment_uuid = ${experiment}`;
await sql`analyze spans`;
const seedSeconds = (performance.now() - t) / 1000;
const [{ n: spanCount }] = await sql`select count(*)::int as n from spans`;

const prefix = `bench-${randomBytes(3).toString('hex')}`;
const api = await start('api', prefix);
const worker = await start('worker', prefix);
const probeUrl = `${base}/experiments`;

const before = prober(probeUrl);
await new Promise((r) => setTimeout(r, 5000));
await before.stop();

const stalled = stalledReaders(`${base}/experiment/${experiment}/stats`, STALLED_READERS);
const during = prober(probeUrl);
t = performance.now();
const res = await fetch(`${base}/experiment/${experiment}/finished`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });
const body = await res.text();
const finishSeconds = (performance.now() - t) / 1000;
await during.stop();
for (const reader of stalled) reader.abort();
const entries = (JSON.parse(body) as { parent_trace_stats: unknown[] }).parent_trace_stats.length;
const [exp] = await sql`select status, num_samples, pinned_stats from experiments where uuid = ${experiment}`;

const result = {
  benchmark: 'experiment-finish',
  date: new Date().toISOString(),
  machine: { cores: os.availableParallelism(), memory_gb: round(os.totalmem() / 2 ** 30), node: process.version },
  roots: ROOTS,
  spans: spanCount,
  seed_seconds: round(seedSeconds),
  stalled_stats_readers: STALLED_READERS,
  finish: { http_status: res.status, seconds: round(finishSeconds), response_mb: round(body.length / 2 ** 20), entries, stored: exp },
  other_requests_ms: {
    idle: { n: before.latencies.length, p50: round(quantile(before.latencies, 0.5)), p99: round(quantile(before.latencies, 0.99)) },
    during_finish: { n: during.latencies.length, p50: round(quantile(during.latencies, 0.5)), p99: round(quantile(during.latencies, 0.99)) },
  },
  peak_rss_mb: { api: round(peakRssMb(api.pid!)), worker: round(peakRssMb(worker.pid!)) },
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(`${root}/bench/results`, { recursive: true });
writeFileSync(`${root}/bench/results/experiment-finish.json`, JSON.stringify(result, null, 2) + '\n');

for (const child of [api, worker]) {
  child.removeAllListeners('exit');
  child.kill('SIGTERM');
}
await sql.end();
const admin = postgres('postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });
await new Promise((r) => setTimeout(r, 3000));
await admin.unsafe(`drop database if exists "${database}" with (force)`);
await admin.end();
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 })) if (keys.length) await redis.unlink(...keys);
await redis.quit();
