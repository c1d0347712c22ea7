import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChaosStack, sleep, supervise, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient } from './lib/http';
import { latency, newSpan, outcomeOf, readinessProbe, spanLoad, tally } from './lib/load';

// Fault 2: PostgreSQL goes down (an immediate shutdown: a crash, recovered from its WAL on restart) for
// 30 s under load. The API keeps accepting span writes (keys and projects are cached, and a write only
// needs Redis), /readyz reports the outage, the worker's span-write jobs fail and retry with backoff, and
// once PostgreSQL is back everything that was accepted is stored.

const OUTAGE_MS = 30_000;
let stack: ChaosStack;

beforeAll(async () => {
  stack = await createChaosStack('postgres-down');
});
afterAll(async () => stack?.close());

describe('PostgreSQL down for 30 s under load', () => {
  it('keeps accepting, reports the outage, retries with backoff, and stores everything accepted', async () => {
    // Key lookups cached for less than the outage: a key must keep working while PostgreSQL is away
    // even after its cache entry has aged (with the default 30 s, keys looked up just before the outage).
    const startApi = (port?: number) => stack.startApi({ AUTH_CACHE_TTL_MS: '5000' }, port);
    const first = await startApi();
    // Restarted if they die, as a deployment's restart policy does: a crash is recorded, not hidden.
    const api = supervise(() => startApi(first.port), first);
    const worker = supervise(() => stack.startWorker(), await stack.startWorker());
    const client = () => apiClient(first.base, stack.key);
    expect(outcomeOf(await client().post('/trace_logs/batch', { trace_logs: [newSpan('chaos')] }))).toBe('200');

    const load = spanLoad(client, { lanes: 3, batchSize: 50, pauseMs: 50, project: 'chaos' });
    const probe = readinessProbe(client);
    await sleep(5000);
    const downAt = Date.now();
    await stack.pg.stop('immediate');
    const single = outcomeOf(await client().post('/trace_log', newSpan('chaos')));
    await sleep(OUTAGE_MS - (Date.now() - downAt));
    const restartAt = Date.now();
    await stack.pg.start();
    const upAt = Date.now();
    await sleep(5000);
    await Promise.all([load.stop(), probe.stop()]);
    const drainMs = await stack.waitForDrain();
    const stored = await stack.storedCount(load.acked);
    api.stop();
    worker.stop();
    const crashes = [...api.crashes, ...worker.crashes];

    const outage = load.records.filter((r) => r.sentAt >= downAt && r.doneAt <= restartAt);
    const readyDuring = probe.samples.filter((s) => s.at > downAt + 1000 && s.at < restartAt);
    const readyBefore = probe.samples.filter((s) => s.at < downAt);
    const retries = [
      ...worker
        .all()
        .map((w) => w.output())
        .join('\n')
        .matchAll(/"queue":"span-write".*?"attempts":(\d+).*?"msg":"job failed"/g),
    ].map((m) => Number(m[1]));
    const figures = {
      outage_s: seconds(upAt - downAt),
      postgres_recovery_on_start_s: seconds(upAt - restartAt),
      writes_during_outage: tally(outage),
      write_latency_during_outage: latency(outage),
      spans_accepted_during_outage: outage.filter((r) => r.outcome === '200').reduce((n, r) => n + r.spans, 0),
      single_write_during_outage: single,
      readyz: { before: tally(readyBefore), during: tally(readyDuring) },
      readyz_first_200_after_postgres_up_s: seconds(
        (probe.samples.find((s) => s.at > upAt && s.outcome === '200')?.at ?? NaN) - upAt,
      ),
      span_write_job_failures_retried: retries.length,
      most_attempts_of_one_job: Math.max(0, ...retries),
      spans_acknowledged: load.acked.length,
      spans_stored: stored,
      all_stored_after_postgres_up_s: seconds(Date.now() - upAt),
      drain_after_load_s: seconds(drainMs),
      failed_jobs: (await stack.jobCounts()).failed,
      process_crashes: crashes,
    };
    recordFigures('postgres-down', figures);

    expect(outage.length).toBeGreaterThan(50);
    expect(tally(outage)).toEqual({ '200': outage.length });
    expect(single).toBe('200');
    expect(readyBefore.length).toBeGreaterThan(0);
    expect(readyBefore.every((s) => s.outcome === '200')).toBe(true);
    expect(readyDuring.length).toBeGreaterThan(20);
    // A probe that times out fails as surely as a 503.
    expect(readyDuring.filter((s) => s.outcome !== '503' && s.outcome !== 'CLIENT_TIMEOUT')).toEqual([]);
    expect(retries.length).toBeGreaterThan(0);
    expect(figures.most_attempts_of_one_job).toBeGreaterThan(1);
    expect(stored).toBe(load.acked.length);
    // postgres.js 3.4.9 used to crash here (porsager/postgres#1154, #1192: a connection lost mid-transaction or
    // while it fetched its types); patches/ fixes both, so any crash fails.
    expect(crashes).toEqual([]);
    expect(figures.failed_jobs).toBe(0);
  });
});
