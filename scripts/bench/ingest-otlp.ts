// Benchmark: the OTLP/HTTP intake (`POST /v1/traces`, protobuf, as the exporters send by default) against the
// batch endpoint (`POST /trace_logs/batch`, JSON) with the same spans: the same pool of traces (spans.ts),
// 1000 spans a request, 8 connections each. The batch's spans carry their cost, and so do the OTLP spans of
// the compared run (`otlp`); a third run (`otlp_priced`) sends them without it, so that the API prices
// their tokens from the tables, as it does for most instrumentations. Each round runs the three at their
// maximum rate, one after the other (which goes first rotates by round), end to end as lib/ingest.ts
// measures: spans stored in PostgreSQL per second until the backlog is empty, and the CPU each process
// spent meanwhile. The request pools are built and encoded before any timing. No ceilings or fixed rates:
// ingest-batch has them.
import { atMaxRate, jsonBodies, ROUNDS, warmUp } from './lib/ingest';
import { load, type LoadOptions } from './lib/load';
import { otlpBodies, partialSuccess } from './lib/otlp';
import { median, round, writeResult, type Row } from './lib/report';
import { createBenchStack, peakRssMb } from './lib/stack';
import { tracePool } from './lib/spans';

const SPANS_PER_REQUEST = 1000;
const CONNECTIONS = 8;
type Endpoint = 'batch' | 'otlp' | 'otlp_priced';
const ENDPOINTS: Endpoint[] = ['batch', 'otlp', 'otlp_priced'];
const LABEL: Record<Endpoint, string> = { batch: 'batch', otlp: 'OTLP', otlp_priced: 'OTLP priced by the API' };
const isOtlp = (e: Endpoint) => e !== 'batch';

const stack = await createBenchStack();
await stack.start();
const traces = tracePool('bench');
const otlpUrl = `${new URL(stack.base).origin}/v1/traces`;
const otlpHeaders = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/x-protobuf' };
const bodies: Record<Endpoint, () => string | Buffer> = {
  batch: jsonBodies(SPANS_PER_REQUEST, traces),
  otlp: otlpBodies(traces, SPANS_PER_REQUEST, true),
  otlp_priced: otlpBodies(traces, SPANS_PER_REQUEST, false),
};
const requestBytes = { batch: Buffer.byteLength(bodies.batch()), otlp: bodies.otlp().length };

// One OTLP request first, read whole: it must be taken without a partial success. Under load, a 200 with a
// body is a partial success (an ExportTraceServiceResponse with every span taken encodes to no bytes).
const first = await fetch(otlpUrl, { method: 'POST', headers: otlpHeaders, body: bodies.otlp() });
const firstBytes = new Uint8Array(await first.arrayBuffer());
const firstRejected = first.status === 200 ? partialSuccess(firstBytes) : undefined;
if (first.status !== 200 || firstRejected)
  throw new Error(
    `POST /v1/traces answered ${first.status}: ${firstRejected ? JSON.stringify(firstRejected) : Buffer.from(firstBytes).toString()}`,
  );

/** What the answers of one measurement said besides 2xx: each status's count, partial successes, the first's body. */
const newAnswers = () => ({ non_2xx: {} as Record<number, number>, otlp_partial_successes: 0, first_failure: '' });
let answers = newAnswers();
const onResponse = (endpoint: Endpoint) => (status: number, body: string) => {
  const partial = isOtlp(endpoint) && status === 200 && body !== '';
  if (status >= 200 && status < 300 && !partial) return;
  if (partial) answers.otlp_partial_successes++;
  else answers.non_2xx[status] = (answers.non_2xx[status] ?? 0) + 1;
  // autocannon hands the body over as text; the message in it (JSON, or protobuf's string field) is readable.
  answers.first_failure ||= `${status} ${body
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, 300)}`;
};

const options: Record<Endpoint, Omit<LoadOptions, 'durationSec' | 'connections'>> = {
  batch: { url: `${stack.base}/trace_logs/batch`, headers: stack.headers, body: bodies.batch },
  otlp: { url: otlpUrl, headers: otlpHeaders, body: bodies.otlp },
  otlp_priced: { url: otlpUrl, headers: otlpHeaders, body: bodies.otlp_priced },
};
const send = (endpoint: Endpoint) => (seconds: number) =>
  load({ ...options[endpoint], connections: CONNECTIONS, durationSec: seconds, onResponse: onResponse(endpoint) });

for (const endpoint of ENDPOINTS) await warmUp(stack, send(endpoint));

/** One endpoint at its maximum rate, with each process's CPU seconds per 1000 stored spans. */
async function measure(endpoint: Endpoint) {
  answers = newAnswers();
  const run = await atMaxRate(stack, SPANS_PER_REQUEST, send(endpoint));
  const per1000 = Object.entries(run.cpu_seconds).map(([k, cpu]) => [k, round((cpu / run.stored_spans) * 1000, 3)]);
  return { ...run, answers, cpu_seconds_per_1000_spans: Object.fromEntries(per1000) as typeof run.cpu_seconds };
}

type Measured = Awaited<ReturnType<typeof measure>>;

/** One round: the three runs, in an order rotated by round so that none always goes first. */
async function measureRound(r: number) {
  const order = ENDPOINTS.map((_, i) => ENDPOINTS[(i + r) % ENDPOINTS.length]);
  const measured: Partial<Record<Endpoint, Measured>> = {};
  for (const endpoint of order) measured[endpoint] = await measure(endpoint);
  const { batch, otlp, otlp_priced } = measured as Record<Endpoint, Measured>;
  const over = (m: Measured) => ({
    persisted_spans_per_sec: round(m.persisted_spans_per_sec / batch.persisted_spans_per_sec, 3),
    api_cpu_per_span: round(m.cpu_seconds_per_1000_spans.api / batch.cpu_seconds_per_1000_spans.api, 3),
  });
  return { order, batch, otlp, otlp_priced, otlp_over_batch: over(otlp), otlp_priced_over_batch: over(otlp_priced) };
}

type Round = Awaited<ReturnType<typeof measureRound>>;
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const result = await measureRound(r);
  rounds.push(result);
  const brief = (m: Measured) => ({ ...m, rss_mb: undefined });
  const briefs = Object.fromEntries(ENDPOINTS.map((e) => [e, brief(result[e])]));
  console.log(`round ${r + 1}:`, JSON.stringify({ ...result, ...briefs }));
}
const peak = { api: round(peakRssMb(stack.apiPid)), worker: round(peakRssMb(stack.workerPid)) };
await stack.stop();

const med = (pick: (r: Round) => number) => round(median(rounds.map(pick)), 3);
const each = (pick: (r: Round) => number) => rounds.map(pick).join(', ');
/** A figure of the three runs, as "batch / OTLP / OTLP priced". */
const all = (pick: (m: Round['batch']) => number) => ENDPOINTS.map((e) => med((r) => pick(r[e]))).join(' / ');
const persistedRatio = med((r) => r.otlp_over_batch.persisted_spans_per_sec);
const sum = (pick: (r: Round) => number) => rounds.reduce((n, r) => n + pick(r), 0);
/** Failed requests of one endpoint over every round, by status (and "error", "partial success"), with the first. */
function failuresOf(endpoint: Endpoint) {
  const count: Record<string, number> = {};
  const add = (what: string | number, n: number) => void (n && (count[what] = (count[what] ?? 0) + n));
  for (const m of rounds.map((r) => r[endpoint])) {
    for (const [status, n] of Object.entries(m.answers.non_2xx)) add(status, n);
    add('error', m.errors);
    add('partial success', m.answers.otlp_partial_successes);
  }
  const total = Object.values(count).reduce((a, b) => a + b, 0);
  const first = rounds.map((r) => r[endpoint].answers.first_failure).find(Boolean);
  return { total, text: `${total}${total ? ` (${JSON.stringify(count)}; first: ${first ?? 'no answer'})` : ''}` };
}
// The load generator counts only the answers within its time, so stored may exceed accepted, never the reverse.
const lost = sum((r) => ENDPOINTS.reduce((n, e) => n + Math.max(0, r[e].accepted_spans - r[e].stored_spans), 0));
const summary: Row[] = [
  {
    figure: 'persisted spans/s, end to end: batch / OTLP / OTLP priced',
    value: all((m) => m.persisted_spans_per_sec),
  },
  {
    figure: `OTLP / batch, persisted spans/s (rounds: ${each((r) => r.otlp_over_batch.persisted_spans_per_sec)})`,
    value: String(persistedRatio),
    target: '≥ 1',
    met: persistedRatio >= 1,
  },
  {
    figure: `OTLP priced / batch, persisted spans/s (rounds: ${each((r) => r.otlp_priced_over_batch.persisted_spans_per_sec)})`,
    value: String(med((r) => r.otlp_priced_over_batch.persisted_spans_per_sec)),
  },
  {
    figure: 'API CPU seconds per 1000 spans: batch / OTLP / OTLP priced',
    value: all((m) => m.cpu_seconds_per_1000_spans.api),
  },
  {
    figure: `OTLP / batch, API CPU per span (rounds: ${each((r) => r.otlp_over_batch.api_cpu_per_span)})`,
    value: String(med((r) => r.otlp_over_batch.api_cpu_per_span)),
  },
  ...(['worker', 'postgres', 'redis'] as const).map((p) => ({
    figure: `${p === 'postgres' ? 'PostgreSQL (every backend)' : p} CPU seconds per 1000 spans: batch / OTLP / OTLP priced`,
    value: all((m) => m.cpu_seconds_per_1000_spans[p]),
  })),
  { figure: 'accepted spans/s: batch / OTLP / OTLP priced', value: all((m) => m.accepted_spans_per_sec) },
  ...ENDPOINTS.map((e) => ({
    figure: `accept latency p50 / p99 (ms): ${LABEL[e]}`,
    value: `${med((r) => r[e].p50_ms)} / ${med((r) => r[e].p99_ms)}`,
  })),
  {
    figure: 'request body (bytes, 1000 spans): batch JSON / OTLP protobuf',
    value: `${requestBytes.batch} / ${requestBytes.otlp}`,
  },
  ...ENDPOINTS.map((e) => {
    const failures = failuresOf(e);
    return {
      figure: `failed requests (non-2xx, errors${isOtlp(e) ? ', partial successes' : ''}), all rounds: ${LABEL[e]}`,
      value: failures.text,
      target: '0',
      met: failures.total === 0,
    };
  }),
  { figure: 'accepted spans not stored, all rounds', value: String(lost), target: '0', met: lost === 0 },
  { figure: 'peak RSS API / worker (MB)', value: `${peak.api} / ${peak.worker}` },
];
writeResult({ benchmark: 'ingest-otlp', summary, rounds, request_bytes: requestBytes, peak_rss_mb: peak });
process.exit(0);
