// Benchmark: a burst at a provider's concurrency limit. A fake OpenAI upstream (its own process) answers in
// 50 ms and admits 10 calls at once; a call beyond that is refused at once with 429 and `Retry-After: 1`.
// 1,000 completion requests arrive together, three ways:
//   - Sightline with no limit configured (provider `openai`): it must learn the limit from the 429s;
//   - Sightline with the limit configured (an OpenAI-compatible provider `limited` on the same upstream,
//     LIMITED_MAX_CONCURRENT=10): every caller should be answered, with no 429 at all, in at most 1.3x
//     the ideal time (requests x 50 ms / 10; issue 39's target, issue 17's 1.1x having ended blocked);
//   - Portkey's open-source gateway with its strongest retry configuration (5 attempts on 429, Retry-After
//     honoured).
// For reference, a client that keeps to the limit itself calls the upstream directly, 10 at a time: the
// floor any gateway could reach. The real API and worker processes; rounds rotate the order. Writes
// bench/results/burst.json.
import { cpuSeconds } from './lib/ingest';
import { median, round, writeResult, type Row } from './lib/report';
import { startPortkey } from './lib/portkey';
import { createBenchStack } from './lib/stack';
import { startUpstream, upstreamStats } from './lib/upstream';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BURST = Number(process.env.BENCH_BURST ?? 1000);
const DELAY_MS = 50;
const ADMIT = 10;
const IDEAL_MS = (BURST * DELAY_MS) / ADMIT;
const MODEL = 'gpt-4o-mini';
const KEY = 'sk-bench-upstream';
const messages = [{ role: 'user', content: 'Name a quick brown animal.' }];

type Way = 'sightline_no_limit' | 'sightline_limit' | 'portkey';
const WAYS: Way[] = (process.env.BENCH_WAYS?.split(',') as Way[] | undefined) ?? [
  'sightline_no_limit',
  'sightline_limit',
  'portkey',
];

const upstream = await startUpstream([`--delay-ms=${DELAY_MS}`, `--admit=${ADMIT}`, '--retry-after=1']);
const env = {
  OPENAI_BASE_URL: upstream.baseURL,
  OPENAI_API_KEY: KEY,
  LIMITED_BASE_URL: upstream.baseURL,
  LIMITED_API_KEY: KEY,
  LIMITED_MAX_CONCURRENT: String(ADMIT),
};
const stack = await createBenchStack({ apiEnv: env, workerEnv: env });
await stack.start();
const portkey = await startPortkey();

type Request = {
  url: string;
  headers: Record<string, string>;
  body: string;
  answered(status: number, json: { status?: string; choices?: unknown[] }): boolean;
};
const sightline = (provider: string): Request => ({
  url: `${stack.base}/completion`,
  headers: stack.headers,
  body: JSON.stringify({ llm_configuration: { model: MODEL, provider, messages }, trace_name: 'burst' }),
  answered: (status: number, json: { status?: string }) => status === 200 && json.status === 'success',
});
const requests: Record<Way, Request> = {
  sightline_no_limit: sightline('openai'),
  sightline_limit: sightline('limited'),
  portkey: {
    url: `${portkey.base}/v1/chat/completions`,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': upstream.baseURL,
      'x-portkey-config': JSON.stringify({
        retry: { attempts: 5, on_status_codes: [429], use_retry_after_header: true },
      }),
    },
    body: JSON.stringify({ model: MODEL, messages }),
    answered: (status: number, json: { choices?: unknown[] }) => status === 200 && Boolean(json.choices?.length),
  },
};

/** Every request at once; when each was answered, and how. */
async function burst(way: Way) {
  const { url, headers, body, answered } = requests[way];
  await fetch(upstream.baseURL.replace(/\/v1$/, '/stats/reset'), { method: 'POST' });
  const before = await upstreamStats(upstream.baseURL);
  const cpu = () => [cpuSeconds([stack.apiPid]), cpuSeconds(stack.workerPids())];
  const cpuBefore = cpu();
  const t0 = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: BURST }, async () => {
      try {
        const res = await fetch(url, { method: 'POST', headers, body });
        const json = (await res.json()) as { status?: string; error?: unknown; choices?: unknown[] };
        const ok = answered(res.status, json);
        return { ok, ms: performance.now() - t0, why: ok ? '' : `${res.status} ${JSON.stringify(json.error ?? json)}` };
      } catch (err) {
        return { ok: false, ms: performance.now() - t0, why: (err as Error).message };
      }
    }),
  );
  const after = await upstreamStats(upstream.baseURL);
  // Sightline's processes, per call (its span writes may still be finishing: a floor, not the whole cost).
  const [api, worker] = cpu().map((s, i) => round(((s - cpuBefore[i]) * 1000) / BURST, 3));
  const ok = outcomes.filter((o) => o.ok);
  const reasons = new Map<string, number>();
  for (const o of outcomes) if (!o.ok) reasons.set(o.why.slice(0, 160), (reasons.get(o.why.slice(0, 160)) ?? 0) + 1);
  return {
    way,
    answered: ok.length,
    share: round(ok.length / BURST, 4),
    drain_ms: round(Math.max(...ok.map((o) => o.ms), 0)),
    last_reply_ms: round(Math.max(...outcomes.map((o) => o.ms))),
    upstream_calls: after.requests - before.requests,
    upstream_429s: after.refused - before.refused,
    upstream_max_in_flight: after.max_in_flight,
    failures: Object.fromEntries([...reasons].slice(0, 3)),
    ...(way !== 'portkey' && { cpu_ms_per_call: { api, worker } }),
  };
}

/**
 * The floor of the limited case: a client that keeps to the limit itself, calling the upstream directly
 * with exactly 10 calls at a time until the 1,000 are done (no gateway, no queue, no log).
 */
async function directAtLimit(): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: ADMIT }, async () => {
      while (next++ < BURST) {
        const res = await fetch(`${upstream.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
          body: JSON.stringify({ model: MODEL, messages }),
        });
        if (res.status !== 200) throw new Error(`the upstream refused a call within its limit: ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  return round(performance.now() - t0);
}

/** Lets the upstream and Sightline's span writes go quiet between runs. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 3000));

// Warm-up: JIT, connections, caches, and the lanes' queues.
for (const way of WAYS)
  await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(requests[way].url, { method: 'POST', headers: requests[way].headers, body: requests[way].body }).then((r) =>
        r.arrayBuffer(),
      ),
    ),
  );
await settle();

const rounds: Awaited<ReturnType<typeof burst>>[][] = [];
const floors: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  floors.push(await directAtLimit());
  console.log(`round ${r + 1}: direct at the limit ${floors.at(-1)} ms`);
  await settle();
  const round_: Awaited<ReturnType<typeof burst>>[] = [];
  for (let i = 0; i < WAYS.length; i++) {
    round_.push(await burst(WAYS[(r + i) % WAYS.length]));
    console.log(`round ${r + 1}:`, JSON.stringify(round_.at(-1)));
    await settle();
  }
  rounds.push(round_);
}
await stack.stop();
portkey.child.kill('SIGTERM');
upstream.child.kill('SIGTERM');

const runs = (way: Way) => rounds.map((r) => r.find((x) => x.way === way)!);
const med = (way: Way, pick: (x: Awaited<ReturnType<typeof burst>>) => number) => median(runs(way).map(pick));
const each = (way: Way, pick: (x: Awaited<ReturnType<typeof burst>>) => number) => runs(way).map(pick).join(', ');
const minShare = (way: Way) => Math.min(...runs(way).map((x) => x.share));
const limitDrain = med('sightline_limit', (x) => x.drain_ms);
const summary: Row[] = [
  {
    figure: `Sightline, no limit configured: callers answered with a completion (rounds: ${each('sightline_no_limit', (x) => x.answered)})`,
    value: `${round(minShare('sightline_no_limit') * 100, 2)}% (lowest round)`,
    target: '≥ 99.9%',
    met: minShare('sightline_no_limit') >= 0.999,
  },
  {
    figure: `Sightline, no limit configured: time to drain (ms; rounds: ${each('sightline_no_limit', (x) => x.drain_ms)}) / upstream 429s`,
    value: `${med('sightline_no_limit', (x) => x.drain_ms)} / ${med('sightline_no_limit', (x) => x.upstream_429s)}`,
  },
  {
    figure: `Sightline, limit configured: callers answered (rounds: ${each('sightline_limit', (x) => x.answered)}) / upstream 429s (rounds: ${each('sightline_limit', (x) => x.upstream_429s)})`,
    value: `${round(minShare('sightline_limit') * 100, 2)}% / ${Math.max(...runs('sightline_limit').map((x) => x.upstream_429s))}`,
    target: '100% / 0',
    met: minShare('sightline_limit') === 1 && runs('sightline_limit').every((x) => x.upstream_429s === 0),
  },
  {
    figure: `Sightline, limit configured: time to drain vs ideal ${IDEAL_MS} ms (ms; rounds: ${each('sightline_limit', (x) => x.drain_ms)})`,
    value: `${limitDrain} (${round(limitDrain / IDEAL_MS, 3)}x)`,
    target: '≤ 1.3x',
    met: limitDrain / IDEAL_MS <= 1.3,
  },
  {
    figure: `A client calling the upstream directly, 10 at a time (no gateway): time for the same calls (ms; rounds: ${floors.join(', ')})`,
    value: `${median(floors)} (${round(median(floors) / IDEAL_MS, 3)}x the ideal); Sightline limited / this: ${round(limitDrain / median(floors), 3)}x`,
  },
  {
    figure: `Portkey, 5 attempts honouring Retry-After: callers answered (rounds: ${each('portkey', (x) => x.answered)}) / time (ms) / upstream 429s`,
    value: `${round(med('portkey', (x) => x.share) * 100, 2)}% / ${med('portkey', (x) => x.last_reply_ms)} / ${med('portkey', (x) => x.upstream_429s)}`,
  },
];
writeResult({ benchmark: 'burst', summary, rounds, direct_at_limit_ms: floors });
process.exit(0);
