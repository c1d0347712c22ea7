import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { otlpJson, spanIdHex, traceIdHex } from '../support/otlp';
import { createChaosStack, sleep, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient, type Outcome } from './lib/http';
import { newSpan, outcomeOf, readinessProbe, spanLoad, tally } from './lib/load';

// Fault 3: Redis stops (SIGTERM) under load and comes back on its append-only file. While it is away no
// write may be acknowledged (the job that makes a write durable cannot be queued), /readyz says so, and
// once it is back the API, the gateway's reply channel and the worker carry on without a restart.

let stack: ChaosStack;
let openai: FakeOpenAI;

beforeAll(async () => {
  openai = await new FakeOpenAI().start();
  stack = await createChaosStack('redis-down', {
    env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-chaos' },
  });
  stack.own({ close: () => openai.stop() });
});
afterAll(async () => stack?.close());

const OUTAGE_MS = 10_000;
const completion = {
  llm_configuration: {
    provider: 'openai',
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'still there?' }],
  },
  project_name: 'chaos',
};

describe('Redis down', () => {
  it('answers writes and /readyz 503 while Redis is away, and recovers without a restart', async () => {
    const api = await stack.startApi();
    await stack.startWorker();
    const client = () => apiClient(api.base, stack.key);
    expect(outcomeOf(await client().post('/trace_logs/batch', { trace_logs: [newSpan('chaos')] }))).toBe('200');

    const load = spanLoad(client, { lanes: 2, batchSize: 50, pauseMs: 20, project: 'chaos' });
    const probe = readinessProbe(client);
    await sleep(3000);
    // A completion in flight when Redis goes: its reply can no longer reach the API.
    openai.plan({ hangMs: 4000 });
    const inFlight = client().post('/completion', completion);
    while (!openai.requests.length) await sleep(20);

    await stack.redis!.stop();
    const downAt = Date.now();
    const inFlightAnswer = await inFlight;
    const during: Record<string, Outcome> = {
      single: await client().post('/trace_log', newSpan('chaos')),
      otlp: await client().post(
        '/otel/v1/traces',
        otlpJson([{ traceId: traceIdHex(), spanId: spanIdHex(), name: 'otel' }]),
      ),
      update: await client().put('/trace_log', {
        trace_id: load.acked[0],
        field_name_to_value_map: { output: 'lost?' },
      }),
      read: await client().get(`/trace_log/${load.acked[0]}`),
      completion: await client().post('/completion', completion),
    };
    await sleep(OUTAGE_MS - (Date.now() - downAt));

    const restartAt = Date.now();
    await stack.redis!.start();
    const upAt = Date.now();
    let firstWriteAt: number | undefined;
    while (!firstWriteAt && Date.now() - upAt < 60_000) {
      firstWriteAt = load.records.find((r) => r.sentAt >= upAt && r.outcome === '200')?.doneAt;
      await sleep(50);
    }
    await sleep(3000);
    await Promise.all([load.stop(), probe.stop()]);
    const readyAgainAt = probe.samples.find((s) => s.at >= upAt && s.outcome === '200')?.at;

    const after = {
      completion: await client().post('/completion', completion),
      read: await client().get(`/trace_log/${load.acked.at(-1)}`),
    };
    const drainMs = await stack.waitForDrain();
    const stored = await stack.storedCount(load.acked);

    const outage = load.records.filter((r) => r.sentAt >= downAt && r.doneAt < restartAt);
    const readyDuring = probe.samples.filter((s) => s.at > downAt && s.at < restartAt);
    const figures = {
      outage_s: seconds(restartAt - downAt),
      writes_during_outage: tally(outage),
      other_requests_during_outage: Object.fromEntries(Object.entries(during).map(([k, o]) => [k, outcomeOf(o)])),
      completion_in_flight: {
        answer: outcomeOf(inFlightAnswer),
        after_redis_stopped_s: seconds(inFlightAnswer.doneAt - downAt),
      },
      readyz_during_outage: tally(readyDuring),
      first_acknowledged_write_after_redis_up_s: firstWriteAt && seconds(firstWriteAt - upAt),
      readyz_200_after_redis_up_s: readyAgainAt && seconds(readyAgainAt - upAt),
      after_recovery: { completion: outcomeOf(after.completion), read: outcomeOf(after.read) },
      all_writes: tally(load.records),
      spans_acknowledged: load.acked.length,
      spans_stored: stored,
      drain_after_load_s: seconds(drainMs),
      failed_jobs: (await stack.jobCounts()).failed,
    };
    recordFigures('redis-down', figures);

    expect(outage.length).toBeGreaterThan(10);
    expect(tally(outage)).toEqual({ '503': outage.length });
    for (const o of Object.values(during)) expect(outcomeOf(o)).toBe('503');
    expect(outcomeOf(inFlightAnswer)).toBe('503');
    expect(inFlightAnswer.kind === 'response' && JSON.parse(inFlightAnswer.body).detail).toMatch(
      /connection to Redis was lost/,
    );
    expect(readyDuring.length).toBeGreaterThan(5);
    expect(readyDuring.every((s) => s.outcome === '503')).toBe(true);
    expect(firstWriteAt).toBeDefined();
    expect(readyAgainAt).toBeDefined();
    expect(outcomeOf(after.completion)).toBe('200');
    expect(outcomeOf(after.read)).toBe('200');
    expect(stored).toBe(load.acked.length);
    expect(figures.failed_jobs).toBe(0);
  });
});
