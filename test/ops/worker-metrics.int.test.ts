import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queues } from '@sightline/queues';
import { observeWorker } from '@sightline/runtime';
import { sleep } from '../fakes/fake-server';
import { buildStack, call, readTrace, type TestStack } from '../support/app';
import { useSql } from '../support/fixtures';
import { freePort } from '../support/processes';
import { newOrganization, testRedis } from '../support/services';
import { parseMetrics, sampleValue, type Sample } from './prometheus';

const { sql } = useSql();
let stack: TestStack;
let port: number;

async function scrapeWorker(): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

/** Scrapes until `ready` holds: the worker reports a job just after BullMQ records its end. */
async function scrapeUntil(ready: (samples: Sample[]) => boolean): Promise<Sample[]> {
  let samples = await scrapeWorker();
  for (let i = 0; i < 100 && !ready(samples); i++) {
    await sleep(50);
    samples = await scrapeWorker();
  }
  return samples;
}

beforeAll(async () => {
  port = await freePort();
  // The worker runs in this process, so its endpoint also shows the API's metrics; the assertions below
  // are about what only the worker observes.
  stack = await buildStack({ env: { METRICS_PORT: String(port) } });
});
afterAll(() => stack.close());

describe('worker metrics on METRICS_PORT', () => {
  it('reports span-write transaction sizes, job waits and durations, stalled counters for every queue, and its pool', async () => {
    const org = await newOrganization(sql);
    const ids = Array.from({ length: 10 }, () => randomUUID());
    await Promise.all(
      ids.map((trace_id) =>
        call(stack.app, org.key, 'POST', '/trace_log', { trace_id, project_name: 'wm', trace_name: 'w' }),
      ),
    );
    for (const id of ids) expect((await readTrace(stack.app, org.key, id)).statusCode).toBe(200);

    const jobsFormed = (s: Sample[]) => sampleValue(s, 'sightline_span_write_job_events_count')!;
    const completed = (s: Sample[]) =>
      sampleValue(s, 'sightline_job_duration_seconds_count', { queue: 'span-write', outcome: 'completed' });
    const samples = await scrapeUntil((s) => completed(s) === jobsFormed(s));

    expect(sampleValue(samples, 'sightline_span_write_transaction_events_sum')).toBe(ids.length);
    expect(sampleValue(samples, 'sightline_span_write_transaction_events_count')).toBeGreaterThanOrEqual(1);
    // Every job the intake formed was started once and completed once.
    expect(completed(samples)).toBe(jobsFormed(samples));
    expect(sampleValue(samples, 'sightline_job_wait_seconds_count', { queue: 'span-write' })).toBe(jobsFormed(samples));
    // Queues whose worker always runs (a queue may have a worker only when its feature is configured).
    for (const name of ['span-write', 'completion', 'eval', 'experiment-finalize'] satisfies (keyof typeof queues)[]) {
      expect(sampleValue(samples, 'sightline_queue_stalled_jobs_total', { queue: name }), name).toBe(0);
    }
    expect(sampleValue(samples, 'sightline_db_pool_max_connections', { pool: 'worker' })).toBe(4);
    expect(sampleValue(samples, 'sightline_db_pool_in_flight', { pool: 'worker' })).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts a job found stalled, once its worker stopped renewing the lock', async () => {
    const name = 'stall-probe';
    const [holderRedis, checkerRedis] = [testRedis(), testRedis()];
    const queue = new Queue(name, { connection: holderRedis, prefix: stack.prefix });
    await queue.add(name, {});
    // This worker takes the job and then never renews its lock, as a worker that froze or died would.
    const holder = new Worker(name, undefined, {
      connection: holderRedis,
      prefix: stack.prefix,
      lockDuration: 300,
      autorun: false,
    });
    expect(await holder.getNextJob(randomUUID())).toBeDefined();

    const checker = new Worker(name, async () => 'done', {
      connection: checkerRedis,
      prefix: stack.prefix,
      stalledInterval: 100,
    });
    observeWorker(checker);
    const redelivered = once(checker, 'completed');
    await once(checker, 'stalled');
    await redelivered;

    const samples = await scrapeUntil(
      (s) => sampleValue(s, 'sightline_job_duration_seconds_count', { queue: name, outcome: 'completed' }) === 1,
    );
    expect(sampleValue(samples, 'sightline_queue_stalled_jobs_total', { queue: name })).toBe(1);
    expect(sampleValue(samples, 'sightline_job_duration_seconds_count', { queue: name, outcome: 'completed' })).toBe(1);
    await Promise.all([checker.close(), holder.close(), queue.close()]);
    holderRedis.disconnect();
    checkerRedis.disconnect();
  });

  it('answers 404 off /metrics', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });
});
