// Benchmark: the latency a gateway adds to an LLM call. A fake OpenAI upstream (its own process, a fixed
// 20 ms before it answers) is called four ways, at 1 and at 64 connections: directly, through Sightline's
// POST /completion (the real API and worker processes, with the queue hop and the trace log), through
// Portkey's open-source gateway (its own process, pointed at the same upstream with its custom-host
// header), and through the design's floor (lib/queue-floor.ts: one BullMQ job a request and a pub/sub
// reply, nothing else), which Sightline's figures are read against. Overhead is a gateway's latency minus
// the direct latency measured in the same round. Redis commands per request are counted from INFO
// commandstats over each run at 1 connection, less the idle processes' own. Streaming is measured by our
// own client, which times the first SSE event that carries a token (the floor does not stream).
//
// Rounds interleave the targets (in a rotating order) so that the machine's noise falls on all of them
// alike; each figure is the median over rounds. Writes bench/results/gateway.json.
import { execSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Queue } from 'bullmq';
import { load } from './lib/load';
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { startPortkey } from './lib/portkey';
import { createBenchStack, freePort, peakRssMb, REDIS_URL, startReporting, type BenchStack } from './lib/stack';
import { startUpstream, upstreamStats } from './lib/upstream';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 4);
const STREAM_SEC = Number(process.env.BENCH_STREAM_SEC ?? 3);
const UPSTREAM_DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 20);
const CONNECTIONS = [1, 64] as const;
const MODEL = 'gpt-4o-mini';
const UPSTREAM_KEY = 'sk-bench-upstream';

const messages = [
  { role: 'system' as const, content: 'You are a terse assistant. Answer in one short sentence.' },
  { role: 'user' as const, content: 'Name a quick brown animal that jumps over lazy dogs, and say why it does so.' },
];

type Target = 'direct' | 'sightline' | 'portkey' | 'floor';
const TARGETS: Target[] = ['direct', 'sightline', 'portkey', 'floor'];
type Endpoint = { url: string; headers: Record<string, string>; body: string };
const loadOf = ({ url, headers, body }: Endpoint) => ({ url, headers, body: () => body });
type StreamEndpoint = Endpoint & { isToken(data: string): boolean; isEnd(data: string): boolean };

const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim());
/** CPU milliseconds (user + system) a process has used so far. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

const children: ChildProcess[] = [];

/** Starts a role of the queue floor (lib/queue-floor.ts), resolving once it is ready, with what it reported. */
async function startFloorRole(role: 'front' | 'worker', args: string[]) {
  const { child, report } = await startReporting<{ port?: number }>('scripts/bench/lib/queue-floor.ts', [
    role,
    ...args,
  ]);
  children.push(child);
  return { pid: child.pid!, port: report.port };
}

/** Commands Redis has run so far, every kind together (INFO commandstats). */
async function redisCommands(redis: BenchStack['redis']): Promise<number> {
  const stats = await redis.info('commandstats');
  let calls = 0;
  for (const m of stats.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

const upstreamCalls = async (baseURL: string) => (await upstreamStats(baseURL)).requests;

/** The data of each complete SSE event in `text`, and the unfinished rest. */
function sseData(text: string): { events: string[]; rest: string } {
  const parts = text.split(/\r?\n\r?\n/);
  const rest = parts.pop() ?? '';
  const events = parts.map((event) =>
    event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n'),
  );
  return { events: events.filter(Boolean), rest };
}

type StreamRun = { ok: number; errors: number; incomplete: number; ttft: number[]; total: number[] };

/**
 * Streams as fast as the targets answer over `connections` keep-alive connections for `durationSec`,
 * timing for each request the first SSE event that carries a token and the end of the stream.
 */
async function streamLoad(target: StreamEndpoint, connections: number, durationSec: number): Promise<StreamRun> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const run: StreamRun = { ok: 0, errors: 0, incomplete: 0, ttft: [], total: [] };
  const body = Buffer.from(target.body);
  const headers = { ...target.headers, 'content-length': String(body.length), accept: 'text/event-stream' };
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      let ttft: number | undefined;
      let last = '';
      let buffer = '';
      const req = request(target.url, { method: 'POST', agent, headers }, (res) => {
        if (res.statusCode !== 200) {
          run.errors++;
          res.resume().on('end', resolve);
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const now = performance.now();
          const { events, rest } = sseData(buffer + text);
          buffer = rest;
          for (const data of events) {
            if (ttft === undefined && target.isToken(data)) ttft = now - t0;
            last = data;
          }
        });
        res.on('end', () => {
          if (ttft === undefined || !target.isEnd(last)) run.incomplete++;
          else {
            run.ok++;
            run.ttft.push(ttft);
            run.total.push(performance.now() - t0);
          }
          resolve();
        });
        res.on('error', () => (run.errors++, resolve()));
      });
      req.on('error', () => (run.errors++, resolve()));
      req.end(body);
    });
  const deadline = performance.now() + durationSec * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  agent.destroy();
  return run;
}

let stack: BenchStack | undefined;
let spanWrites: Queue | undefined;
async function cleanup() {
  await spanWrites?.close().catch(() => {});
  await stack?.stop().catch((err: Error) => console.error('stack cleanup failed:', err.message));
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
}
process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

try {
  const upstream = await startUpstream([`--delay-ms=${UPSTREAM_DELAY_MS}`]);
  children.push(upstream.child);
  const portkey = await startPortkey();
  children.push(portkey.child);
  const apiPort = await freePort();
  const providerEnv = { OPENAI_BASE_URL: upstream.baseURL, OPENAI_API_KEY: UPSTREAM_KEY };
  const sightline = (stack = await createBenchStack({ port: apiPort, apiEnv: providerEnv, workerEnv: providerEnv }));
  const spanQueue = (spanWrites = new Queue('span-write', { connection: sightline.redis, prefix: sightline.prefix }));
  await sightline.start();
  // The floor on the same Redis (a prefix of its own) and upstream, with Sightline's completion concurrency.
  const floorPrefix = `${sightline.prefix}-floor`;
  const floorWorker = await startFloorRole('worker', [
    `--redis=${REDIS_URL}`,
    `--prefix=${floorPrefix}`,
    `--upstream=${upstream.baseURL}`,
    '--concurrency=100',
  ]);
  const floorFront = await startFloorRole('front', [`--redis=${REDIS_URL}`, `--prefix=${floorPrefix}`]);
  const openAiBody = { model: MODEL, messages };
  const sightlineBody = {
    llm_configuration: { model: MODEL, provider: 'openai', messages },
    project_name: 'gateway-bench',
    trace_name: 'bench',
  };
  const portkeyHeaders = {
    'content-type': 'application/json',
    authorization: `Bearer ${UPSTREAM_KEY}`,
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': upstream.baseURL,
  };
  const endpoints: Record<Target, Endpoint> = {
    direct: {
      url: `${upstream.baseURL}/chat/completions`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
      body: JSON.stringify(openAiBody),
    },
    sightline: { url: `${stack.base}/completion`, headers: stack.headers, body: JSON.stringify(sightlineBody) },
    portkey: { url: `${portkey.base}/v1/chat/completions`, headers: portkeyHeaders, body: JSON.stringify(openAiBody) },
    floor: {
      url: `http://127.0.0.1:${floorFront.port!}/v1/chat/completions`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${UPSTREAM_KEY}` },
      body: JSON.stringify(openAiBody),
    },
  };
  const openAiStream = JSON.stringify({ ...openAiBody, stream: true, stream_options: { include_usage: true } });
  const openAiToken = (data: string) =>
    data !== '[DONE]' &&
    Boolean((JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content);
  const streams: Record<Exclude<Target, 'floor'>, StreamEndpoint> = {
    direct: { ...endpoints.direct, body: openAiStream, isToken: openAiToken, isEnd: (d) => d === '[DONE]' },
    sightline: {
      ...endpoints.sightline,
      url: `${stack.base}/completion/stream`,
      isToken: (d) => Boolean((JSON.parse(d) as { chunk?: string }).chunk),
      isEnd: (d) => (JSON.parse(d) as { status?: string }).status === 'success',
    },
    portkey: { ...endpoints.portkey, body: openAiStream, isToken: openAiToken, isEnd: (d) => d === '[DONE]' },
  };

  // Every target must really answer before anything is timed: an error page is fast, and proves nothing.
  for (const target of TARGETS) {
    const { url, headers, body } = endpoints[target];
    const res = await fetch(url, { method: 'POST', headers, body });
    const json = (await res.json()) as {
      content?: string;
      status?: string;
      choices?: { message: { content: string } }[];
    };
    const content =
      target === 'sightline' ? json.status === 'success' && json.content : json.choices?.[0]?.message.content;
    if (res.status !== 200 || !content)
      throw new Error(`${target} did not answer a completion: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  }

  /** Sightline logs each completion after answering; its span writes finish before the next target runs. */
  async function settle() {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const counts = await spanQueue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((n) => n === 0) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300));
  }

  // Warm-up: JIT, connection pools, the project and auth caches.
  for (const connections of CONNECTIONS) {
    for (const target of TARGETS) {
      await load({ ...loadOf(endpoints[target]), connections, durationSec: 1 });
      if (target !== 'floor') await streamLoad(streams[target], connections, 1);
      await settle();
    }
  }

  type Run = {
    round: number;
    connections: number;
    target: Target;
    ok: number;
    rps: number;
    non2xx: number;
    errors: number;
    upstream_calls: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    cpu_ms_per_request: Record<string, number>;
    redis_commands_per_request: number;
  };
  // The gateway's own processes. Redis and PostgreSQL serve every session on this machine, so their CPU is
  // left out of these figures; they are Sightline's alone.
  const gatewayPids: Record<Target, Record<string, number>> = {
    direct: {},
    sightline: { api: sightline.apiPid, worker: sightline.workerPid },
    portkey: { portkey: portkey.child.pid! },
    floor: { front: floorFront.pid, worker: floorWorker.pid },
  };
  // Redis's own pace with every process idle (BullMQ's blocking reads and stall checks), taken out of the
  // commands each run counts.
  const idleSec = 3;
  const idleBefore = await redisCommands(sightline.redis);
  await new Promise((r) => setTimeout(r, idleSec * 1000));
  const idleCommandsPerSec = ((await redisCommands(sightline.redis)) - idleBefore) / idleSec;
  const cpuOf = (t: Target) =>
    Object.fromEntries(Object.entries(gatewayPids[t]).map(([name, pid]) => [name, cpuMs(pid)]));
  type StreamMeasure = {
    round: number;
    connections: number;
    target: Target;
    ok: number;
    errors: number;
    incomplete: number;
    ttft_p50: number;
    ttft_p99: number;
    total_p50: number;
  };
  const runs: Run[] = [];
  const streamRuns: StreamMeasure[] = [];
  const started = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    const order = TARGETS.map((_, i) => TARGETS[(i + r) % TARGETS.length]);
    for (const connections of CONNECTIONS) {
      for (const target of order) {
        const before = await upstreamCalls(upstream.baseURL);
        const cpuBefore = cpuOf(target);
        const commandsBefore = await redisCommands(sightline.redis);
        const t0 = performance.now();
        const res = await load({
          ...loadOf(endpoints[target]),
          connections,
          durationSec: DURATION_SEC,
          keepLatencies: true,
        });
        // Settling is part of the work: Sightline writes each completion's log after answering.
        await settle();
        const cpuAfter = cpuOf(target);
        const commands =
          (await redisCommands(sightline.redis)) -
          commandsBefore -
          (idleCommandsPerSec * (performance.now() - t0)) / 1000;
        const l = res.latencies!;
        const run: Run = {
          round: r + 1,
          connections,
          target,
          ok: res.ok,
          rps: round(res.okPerSec),
          non2xx: res.non2xx,
          errors: res.errors + res.timeouts,
          upstream_calls: (await upstreamCalls(upstream.baseURL)) - before,
          p50: round(quantile(l, 0.5), 2),
          p90: round(quantile(l, 0.9), 2),
          p99: round(quantile(l, 0.99), 2),
          max: round(Math.max(...l), 2),
          cpu_ms_per_request: Object.fromEntries(
            Object.keys(cpuAfter).map((k) => [k, round((cpuAfter[k] - cpuBefore[k]) / Math.max(1, res.ok), 3)]),
          ),
          redis_commands_per_request: round(commands / Math.max(1, res.ok), 1),
        };
        runs.push(run);
        console.log(
          `round ${run.round} c=${connections} ${target.padEnd(9)} ${run.rps} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  non2xx ${run.non2xx} errors ${run.errors}`,
        );
      }
    }
    for (const connections of CONNECTIONS) {
      for (const target of order) {
        if (target === 'floor') continue;
        const s = await streamLoad(streams[target], connections, STREAM_SEC);
        await settle();
        const m: StreamMeasure = {
          round: r + 1,
          connections,
          target,
          ok: s.ok,
          errors: s.errors,
          incomplete: s.incomplete,
          ttft_p50: round(quantile(s.ttft, 0.5), 2),
          ttft_p99: round(quantile(s.ttft, 0.99), 2),
          total_p50: round(quantile(s.total, 0.5), 2),
        };
        streamRuns.push(m);
        console.log(
          `round ${m.round} c=${connections} ${target.padEnd(9)} stream: ${m.ok} ok  TTFT p50 ${m.ttft_p50} ms  p99 ${m.ttft_p99} ms  errors ${m.errors + m.incomplete}`,
        );
      }
    }
  }
  const measuredSeconds = (performance.now() - started) / 1000;

  // Overheads are taken within each round (gateway minus the direct call of that round), then the median.
  const find = (c: number, t: Target, r: number) =>
    runs.find((x) => x.connections === c && x.target === t && x.round === r)!;
  const findStream = (c: number, t: Target, r: number) =>
    streamRuns.find((x) => x.connections === c && x.target === t && x.round === r)!;
  const roundsList = Array.from({ length: ROUNDS }, (_, i) => i + 1);
  const summary: Row[] = [];
  const overheads: Record<string, unknown> = {};
  const fmt = (x: number) => `${round(x, 2)} ms`;
  for (const c of CONNECTIONS) {
    const per = (t: Target, q: 'p50' | 'p99') => roundsList.map((r) => find(c, t, r)[q] - find(c, 'direct', r)[q]);
    const direct = (q: 'p50' | 'p99') => median(roundsList.map((r) => find(c, 'direct', r)[q]));
    const rps = (t: Target) => median(roundsList.map((r) => find(c, t, r).rps));
    summary.push({
      figure: `Direct call, ${c} conn.: p50 / p99 (req/s)`,
      value: `${fmt(direct('p50'))} / ${fmt(direct('p99'))} (${round(rps('direct'))})`,
    });
    for (const [q, k, target] of [
      ['p50', 1, 'ratio ≤ 1'],
      ['p99', 1.5, 'ratio ≤ 1.5'],
    ] as const) {
      const s = per('sightline', q),
        p = per('portkey', q);
      // Compared within each round (same machine state), then the median of those ratios. A round where
      // Portkey added nothing measurable counts against Sightline unless Sightline added nothing either.
      const ratios = s.map((x, i) => (p[i] > 0 ? x / p[i] : x > 0 ? Infinity : 0));
      const ratio = median(ratios);
      overheads[`c${c}_${q}`] = {
        sightline_ms: s.map((x) => round(x, 2)),
        portkey_ms: p.map((x) => round(x, 2)),
        ratios: ratios.map((x) => round(x, 2)),
      };
      summary.push({
        figure: `Overhead ${q}, ${c} conn.: Sightline (Portkey); ratio`,
        value: `${fmt(median(s))} (${fmt(median(p))}); ${round(ratio, 2)}`,
        target,
        met: ratio <= k,
      });
    }
    summary.push({
      figure: `Throughput, ${c} conn.: Sightline / Portkey / the floor`,
      value: `${round(rps('sightline'))} / ${round(rps('portkey'))} / ${round(rps('floor'))} req/s`,
    });
    // Against the floor, issue 39's targets: each taken within a round, then the median over rounds.
    const ofFloor = median(roundsList.map((r) => find(c, 'sightline', r).rps / find(c, 'floor', r).rps));
    summary.push({
      figure: `Throughput, ${c} conn.: Sightline as a share of the floor`,
      value: String(round(ofFloor, 2)),
      ...(c === 64 && { target: '≥ 0.75', met: ofFloor >= 0.75 }),
    });
    const aboveFloor = median(roundsList.map((r) => find(c, 'sightline', r).p50 - find(c, 'floor', r).p50));
    summary.push({
      figure: `Overhead p50, ${c} conn.: Sightline above the floor (the floor above direct)`,
      value: `${fmt(aboveFloor)} (${fmt(median(per('floor', 'p50')))})`,
      ...(c === 1 && { target: '≤ 1.5 ms', met: aboveFloor <= 1.5 }),
    });
    const commands = (t: Target) => median(roundsList.map((r) => find(c, t, r).redis_commands_per_request));
    const commandRatio = commands('sightline') / commands('floor');
    summary.push({
      figure: `Redis commands per request, ${c} conn.: Sightline / the floor (ratio)`,
      value: `${round(commands('sightline'))} / ${round(commands('floor'))} (${round(commandRatio, 2)})`,
      ...(c === 1 && { target: 'ratio ≤ 1.3', met: commandRatio <= 1.3 }),
    });
    const cpu = (t: Target, k: string) => round(median(roundsList.map((r) => find(c, t, r).cpu_ms_per_request[k])), 2);
    summary.push({
      figure: `Gateway CPU per request, ${c} conn.: Sightline API + worker (Portkey; the floor's front + worker)`,
      value: `${cpu('sightline', 'api')} + ${cpu('sightline', 'worker')} ms (${cpu('portkey', 'portkey')} ms; ${cpu('floor', 'front')} + ${cpu('floor', 'worker')} ms)`,
    });
  }
  for (const c of CONNECTIONS) {
    const per = (t: Target) =>
      roundsList.map((r) => findStream(c, t, r).ttft_p50 - findStream(c, 'direct', r).ttft_p50);
    const s = per('sightline'),
      p = per('portkey');
    overheads[`c${c}_ttft_p50`] = { sightline_ms: s.map((x) => round(x, 2)), portkey_ms: p.map((x) => round(x, 2)) };
    summary.push({
      figure: `Streaming TTFT p50, ${c} conn.: added by Sightline (Portkey)`,
      value: `${fmt(median(s))} (${fmt(median(p))}) over direct ${fmt(median(roundsList.map((r) => findStream(c, 'direct', r).ttft_p50)))}`,
      target: '≤ 2 ms',
      met: median(s) <= 2,
    });
  }
  const failures =
    runs.reduce((n, r) => n + r.non2xx + r.errors, 0) + streamRuns.reduce((n, r) => n + r.errors + r.incomplete, 0);
  summary.push({ figure: 'Failed requests (all runs)', value: String(failures) });

  writeResult({
    benchmark: 'gateway',
    summary,
    method: {
      rounds: ROUNDS,
      duration_sec: DURATION_SEC,
      stream_sec: STREAM_SEC,
      upstream_delay_ms: UPSTREAM_DELAY_MS,
      connections: CONNECTIONS,
      measured_seconds: round(measuredSeconds),
      load_generator:
        'autocannon (non-streaming, per-response latencies kept at sub-ms precision); own keep-alive SSE client (streaming)',
      overhead:
        'per round: gateway percentile minus the direct percentile of the same round; figures are medians over rounds',
      sightline:
        'POST /api/svc/v1/completion and /completion/stream, real API + worker processes, LOG_LEVEL=warn, every completion logged as a span',
      portkey: `@portkey-ai/gateway build/start-server.js --headless, x-portkey-provider: openai, x-portkey-custom-host: <upstream>`,
      floor:
        'scripts/bench/lib/queue-floor.ts: an HTTP front adding one BullMQ job a request (removed on completion) and waiting for a pub/sub reply; a worker (concurrency 100) calling the upstream and publishing the answer',
      redis_commands:
        'INFO commandstats before and after each run (its settling included), less the idle rate measured with every process idle, divided by the requests answered',
      idle_redis_commands_per_sec: round(idleCommandsPerSec),
    },
    overheads,
    runs,
    stream_runs: streamRuns,
    peak_rss_mb: {
      api: round(peakRssMb(stack.apiPid)),
      worker: round(peakRssMb(stack.workerPid)),
      portkey: round(peakRssMb(portkey.child.pid!)),
      floor_front: round(peakRssMb(floorFront.pid)),
      floor_worker: round(peakRssMb(floorWorker.pid)),
    },
    portkey_stderr_tail: portkey.stderr().slice(-1000) || null,
  });
} finally {
  await cleanup();
}
