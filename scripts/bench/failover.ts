// Benchmark: failover through a fallback route. Two fake OpenAI upstreams (their own processes, 20 ms
// before they answer): the primary answers 500 to every second call, the backup answers every call.
// Sightline's `POST /completion` names the route `[primary, backup]` as its model, one call at a time,
// with the real API and worker processes. Every call should succeed, and a call that fails over should
// cost no more than the primary's own failure time, plus 5 ms, beyond a call the primary answers. The
// primary's failure time is measured directly in the same round. Writes bench/results/failover.json.
import { median, quantile, round, writeResult, type Row } from './lib/report';
import { createBenchStack } from './lib/stack';
import { startUpstream, upstreamStats } from './lib/upstream';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const DELAY_MS = 20;
const MODEL = 'gpt-4o-mini';
const KEY = 'sk-bench-upstream';
const messages = [{ role: 'user', content: 'Name a quick brown animal.' }];

const primary = await startUpstream([`--delay-ms=${DELAY_MS}`, '--fail-every=2']);
const backup = await startUpstream([`--delay-ms=${DELAY_MS}`]);
// The backup is an OpenAI-compatible provider of its own name.
const env = {
  OPENAI_BASE_URL: primary.baseURL,
  OPENAI_API_KEY: KEY,
  BACKUP_BASE_URL: backup.baseURL,
  BACKUP_API_KEY: KEY,
};
const stack = await createBenchStack({ apiEnv: env, workerEnv: env });
await stack.start();
const post = async (path: string, body: object) => {
  const t0 = performance.now();
  const res = await fetch(`${stack.base}${path}`, {
    method: 'POST',
    headers: stack.headers,
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { status?: string; provider?: string; error?: string };
  return { ms: performance.now() - t0, status: res.status, json };
};
const saved = await post('/routes', {
  name: 'failover',
  strategy: 'fallback',
  targets: [
    { provider: 'openai', model: MODEL },
    { provider: 'backup', model: MODEL },
  ],
});
if (saved.status !== 200) throw new Error(`POST /routes answered ${saved.status}: ${JSON.stringify(saved.json)}`);
const routed = { llm_configuration: { model: 'route:failover', messages } };

/** The primary's failure time, called directly: the latency of its 500s. */
async function primaryFailureMs(calls: number): Promise<number[]> {
  const failures: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const res = await fetch(`${primary.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages }),
    });
    await res.arrayBuffer();
    if (res.status === 500) failures.push(performance.now() - t0);
  }
  return failures;
}

async function measureRound() {
  const answeredByPrimary: number[] = [];
  const failedOver: number[] = [];
  const failures: string[] = [];
  const before = await upstreamStats(primary.baseURL);
  for (let i = 0; i < CALLS; i++) {
    const { ms, status, json } = await post('/completion', routed);
    if (status !== 200 || json.status !== 'success') failures.push(`${status} ${json.error ?? ''}`.trim());
    else (json.provider === 'openai' ? answeredByPrimary : failedOver).push(ms);
  }
  const after = await upstreamStats(primary.baseURL);
  const direct = await primaryFailureMs(40);
  const p50 = (xs: number[]) => round(median(xs), 2);
  return {
    calls: CALLS,
    succeeded: answeredByPrimary.length + failedOver.length,
    failures: failures.slice(0, 5),
    primary_calls: after.requests - before.requests,
    primary_failures: after.failed - before.failed,
    failed_over: failedOver.length,
    p50_ms_answered_by_primary: p50(answeredByPrimary),
    p50_ms_failed_over: p50(failedOver),
    p99_ms_failed_over: round(quantile(failedOver, 0.99), 2),
    p50_ms_primary_failure_direct: p50(direct),
    added_by_fallback_ms: round(median(failedOver) - median(answeredByPrimary) - median(direct), 2),
  };
}

for (let i = 0; i < 20; i++) await post('/completion', routed);
const rounds: Awaited<ReturnType<typeof measureRound>>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  rounds.push(await measureRound());
  console.log(`round ${r + 1}:`, JSON.stringify(rounds.at(-1)));
}
await stack.stop();
primary.child.kill('SIGTERM');
backup.child.kill('SIGTERM');

const med = (pick: (r: (typeof rounds)[number]) => number) => round(median(rounds.map(pick)), 2);
const each = (pick: (r: (typeof rounds)[number]) => number) => rounds.map(pick).join(', ');
const succeeded = rounds.reduce((n, r) => n + r.succeeded, 0);
const calls = rounds.reduce((n, r) => n + r.calls, 0);
const added = med((r) => r.added_by_fallback_ms);
const summary: Row[] = [
  {
    figure: `calls answered with a completion, all rounds (the primary failed ${rounds.reduce((n, r) => n + r.primary_failures, 0)} of its ${rounds.reduce((n, r) => n + r.primary_calls, 0)} calls)`,
    value: `${succeeded} / ${calls}`,
    target: '100%',
    met: succeeded === calls,
  },
  {
    figure: 'p50 latency (ms): answered by the primary / failed over to the backup',
    value: `${med((r) => r.p50_ms_answered_by_primary)} / ${med((r) => r.p50_ms_failed_over)}`,
  },
  {
    figure: "p50 of the primary's own failure, called directly (ms)",
    value: String(med((r) => r.p50_ms_primary_failure_direct)),
  },
  {
    figure: `added by failing over, beyond the primary's failure time (ms; rounds: ${each((r) => r.added_by_fallback_ms)})`,
    value: String(added),
    target: '≤ 5',
    met: added <= 5,
  },
  { figure: 'p99 latency of a call that failed over (ms)', value: String(med((r) => r.p99_ms_failed_over)) },
];
writeResult({ benchmark: 'failover', summary, rounds });
process.exit(0);
