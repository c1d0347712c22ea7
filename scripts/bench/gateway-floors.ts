// Benchmark: what the design allows a logged completion (issue 39). The queue floor (lib/queue-floor.ts: one
// BullMQ job a request and a pub/sub reply) is run three ways against the same fake upstream (20 ms), at 64
// connections: with no log (the floor the gateway benchmark reads Sightline against), with each call's log
// written as a row of `spans` by one multi-row INSERT a batch (the database's own write), and with the log
// written by Sightline's span writer. Both logs are durable in Redis with the answer, as Sightline's are. Each
// round runs the three in turn (the order alternating), so that the machine's noise falls on all of them; each
// logged floor's rate is read as a share of the bare floor's in the same round. Writes
// bench/results/gateway-floors.json.
import { execSync } from 'node:child_process';
import { getOrCreateProject } from '@sightline/db';
import { cpuSeconds } from './lib/ingest';
import { load } from './lib/load';
import { median, round, writeResult } from './lib/report';
import { createBenchStack, REDIS_URL, startReporting } from './lib/stack';
import { startUpstream } from './lib/upstream';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 8);
const CONNECTIONS = 64;
const LOGS = ['none', 'rows', 'spans'] as const;
type Log = (typeof LOGS)[number];

const stack = await createBenchStack();
const upstream = await startUpstream(['--delay-ms=20']);
const project = (await getOrCreateProject(stack.sql, stack.organizationId, 'floor')).uuid;
const floors = {} as Record<Log, { url: string; pids: number[] }>;
for (const log of LOGS) {
  const prefix = `${stack.prefix}-${log}`;
  const worker = await startReporting('scripts/bench/lib/queue-floor.ts', [
    'worker',
    `--redis=${REDIS_URL}`,
    `--prefix=${prefix}`,
    `--upstream=${upstream.baseURL}`,
    `--log=${log}`,
    `--database=${stack.databaseUrl}`,
    `--organization=${stack.organizationId}`,
    `--project=${project}`,
  ]);
  const front = await startReporting<{ port: number }>('scripts/bench/lib/queue-floor.ts', [
    'front',
    `--redis=${REDIS_URL}`,
    `--prefix=${prefix}`,
  ]);
  floors[log] = {
    url: `http://127.0.0.1:${front.report.port}/v1/chat/completions`,
    pids: [front.child.pid!, worker.child.pid!],
  };
}
const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Name a quick brown animal that jumps over lazy dogs, and say why it does so.' }],
});
const run = (log: Log, durationSec: number) =>
  load({
    url: floors[log].url,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: () => body,
    connections: CONNECTIONS,
    durationSec,
  });
const postgresPids = () => execSync('pgrep -x postgres || true').toString().split('\n').filter(Boolean).map(Number);
/** CPU milliseconds a request: the floor's front, its worker, and every PostgreSQL process. */
async function measured(log: Log) {
  const cpu = () => [cpuSeconds([floors[log].pids[0]]), cpuSeconds([floors[log].pids[1]]), cpuSeconds(postgresPids())];
  const before = cpu();
  const res = await run(log, DURATION_SEC);
  answered[log] += res.ok;
  const after = cpu();
  const perRequest = after.map((a, i) => round(((a - before[i]) * 1000) / res.ok, 3));
  return {
    log,
    rps: round(res.okPerSec),
    failed: res.non2xx + res.errors,
    cpu_ms_per_request: { front: perRequest[0], worker: perRequest[1], postgresql: perRequest[2] },
  };
}

const answered: Record<Log, number> = { none: 0, rows: 0, spans: 0 };
// Warm-up: JIT, connections, the first partition's pages.
for (const log of LOGS) answered[log] += (await run(log, 2)).ok;
const rounds: Awaited<ReturnType<typeof measured>>[][] = [];
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? [...LOGS].reverse() : LOGS;
  const results = [];
  for (const log of order) {
    results.push(await measured(log));
    console.log(JSON.stringify({ round: r + 1, ...results.at(-1) }));
    await new Promise((resolve) => setTimeout(resolve, 2000)); // the logs written behind the answers
  }
  rounds.push(results);
}
const of = (r: (typeof rounds)[number], log: Log) => r.find((x) => x.log === log)!;
const shares = (log: Log) => rounds.map((r) => of(r, log).rps / of(r, 'none').rps);
const spread = (xs: number[]) => `${round(median(xs), 2)} (${round(Math.min(...xs), 2)}–${round(Math.max(...xs), 2)})`;
const cpu = (log: Log, part: 'front' | 'worker' | 'postgresql') =>
  round(median(rounds.map((r) => of(r, log).cpu_ms_per_request[part])), 2);
// Every answered call's log, once: read once the journals are empty.
while ((await Promise.all(LOGS.map((log) => stack.redis.hlen(`${stack.prefix}-${log}:journal`)))).some(Boolean))
  await new Promise((resolve) => setTimeout(resolve, 200));
const [{ n: logged }] = await stack.sql<{ n: number }[]>`select count(*)::int as n from spans`;
writeResult({
  benchmark: 'gateway-floors',
  summary: [
    {
      figure: `Floor, no log, ${CONNECTIONS} conn. (req/s, median of rounds)`,
      value: String(median(rounds.map((r) => of(r, 'none').rps))),
    },
    { figure: 'Floor with the log as rows of spans: share of the bare floor (min–max)', value: spread(shares('rows')) },
    {
      figure: 'Floor with the log by Sightline’s span writer: share of the bare floor (min–max)',
      value: spread(shares('spans')),
    },
    ...LOGS.map((log) => ({
      figure: `CPU a request, ms, log ${log}: front + worker + PostgreSQL`,
      value: `${cpu(log, 'front')} + ${cpu(log, 'worker')} + ${cpu(log, 'postgresql')}`,
    })),
    {
      // A run stops with a call in flight on each connection: its worker answers and logs it all the same.
      figure: `Logs written / calls made to the logged floors (answered, and the ${CONNECTIONS} in flight as each run stops) / failed requests`,
      value: `${logged} / ${answered.rows + answered.spans + CONNECTIONS * 2 * (ROUNDS + 1)} / ${rounds.flat().reduce((n, x) => n + x.failed, 0)}`,
    },
  ],
  method: {
    rounds: ROUNDS,
    duration_sec: DURATION_SEC,
    connections: CONNECTIONS,
    upstream_delay_ms: 20,
    floors: 'scripts/bench/lib/queue-floor.ts --log=none|rows|spans (see its header)',
  },
  rounds,
});
for (const log of LOGS)
  for await (const keys of stack.redis.scanStream({ match: `${stack.prefix}-${log}:*`, count: 1000 }))
    if ((keys as string[]).length) await stack.redis.unlink(...(keys as string[]));
await stack.stop();
process.exit(0);
