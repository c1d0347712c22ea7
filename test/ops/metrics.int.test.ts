import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queues, type QueueName } from '@sightline/queues';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { testRedis } from '../support/services';
import { parseMetrics, sampleValue, type Sample } from './prometheus';

const SPANS = 20;
const OLD_JOB_AGE_MS = 60_000;
// Every queue but span-write gets (index + 1) jobs, the first of them added a minute ago.
const otherQueues = (Object.keys(queues) as QueueName[]).filter((name) => name !== 'span-write');

const {
  stack,
  sql,
  orgs: [org],
} = useStack({ worker: false, orgs: ['org'] });
let redis: Redis;
let traceIds: string[];
let missingId: string;

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const res = await stack.app.inject({ url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.body, samples: parseMetrics(res.body) };
}

// All traffic happens before the first scrape: queue figures are cached for a moment after each reading.
beforeAll(async () => {
  redis = testRedis();
  await call(stack.app, org.key, 'POST', '/project', { name: 'metrics' });
  traceIds = Array.from({ length: SPANS }, () => randomUUID());
  const posted = await Promise.all(
    traceIds.map((trace_id) =>
      call(stack.app, org.key, 'POST', '/trace_log', { trace_id, project_name: 'metrics', trace_name: 'm' }),
    ),
  );
  expect(posted.map((r) => r.statusCode)).toEqual(traceIds.map(() => 200));
  missingId = randomUUID();
  expect((await call(stack.app, org.key, 'GET', `/trace_log/${missingId}`)).statusCode).toBe(404);
  expect((await stack.app.inject({ url: `/no/such/${missingId}` })).statusCode).toBe(404);

  for (const [index, name] of otherQueues.entries()) {
    const queue = new Queue(name, { connection: redis, prefix: stack.prefix });
    await queue.add(name, { probe: 0 }, { timestamp: Date.now() - OLD_JOB_AGE_MS });
    for (let i = 1; i <= index; i++) await queue.add(name, { probe: i });
    await queue.close();
  }
});
afterAll(() => redis.disconnect());

describe('GET /metrics', () => {
  it('labels HTTP latency by route pattern, method and status code, never by the raw URL', async () => {
    const { text, samples } = await scrape();
    const count = (labels: Record<string, string>) =>
      sampleValue(samples, 'sightline_http_request_duration_seconds_count', labels);
    expect(count({ method: 'POST', route: '/api/svc/v1/trace_log', status_code: '200' })).toBe(SPANS);
    expect(count({ method: 'GET', route: '/api/svc/v1/trace_log/:trace_id', status_code: '404' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(
      sampleValue(samples, 'sightline_http_request_duration_seconds_bucket', {
        method: 'POST',
        route: '/api/svc/v1/trace_log',
        status_code: '200',
        le: '+Inf',
      }),
    ).toBe(SPANS);
    expect(text).not.toContain(missingId);
    expect(text).not.toContain(traceIds[0]);
  });

  it('reports depth, states and the oldest waiting job of every queue in the registry, with the worker stopped', async () => {
    const { samples } = await scrape();
    const jobs = (queue: string, state: string) => sampleValue(samples, 'sightline_queue_jobs', { queue, state });
    for (const name of Object.keys(queues)) {
      for (const state of ['waiting', 'prioritized', 'delayed', 'active', 'failed'])
        expect(jobs(name, state), `${name} ${state}`).toBeDefined();
      expect(jobs(name, 'active'), name).toBe(0);
      expect(jobs(name, 'failed'), name).toBe(0);
    }
    for (const [index, name] of otherQueues.entries()) {
      expect(jobs(name, 'waiting'), name).toBe(index + 1);
      expect(sampleValue(samples, 'sightline_queue_depth', { queue: name }), name).toBe(index + 1);
      expect(
        sampleValue(samples, 'sightline_queue_oldest_waiting_seconds', { queue: name }),
        name,
      ).toBeGreaterThanOrEqual(OLD_JOB_AGE_MS / 1000);
    }
    // The span-write jobs the intake says it formed are the ones Redis holds.
    const formed = sampleValue(samples, 'sightline_span_write_job_events_count');
    expect(formed).toBeGreaterThanOrEqual(1);
    expect(jobs('span-write', 'waiting')).toBe(formed);
    expect(sampleValue(samples, 'sightline_queue_depth', { queue: 'span-write' })).toBe(formed);
    expect(
      sampleValue(samples, 'sightline_queue_oldest_waiting_seconds', { queue: 'span-write' }),
    ).toBeGreaterThanOrEqual(0);
  });

  it('observes the size of every span-write job the intake forms', async () => {
    const { samples } = await scrape();
    expect(sampleValue(samples, 'sightline_span_write_job_events_sum')).toBe(SPANS);
    expect(sampleValue(samples, 'sightline_span_write_job_events_bucket', { le: '1000' })).toBe(
      sampleValue(samples, 'sightline_span_write_job_events_count'),
    );
  });

  it('reports the pool size and the queries in flight, including those waiting for a connection', async () => {
    const max = stack.app.sql.options.max;
    expect(sampleValue((await scrape()).samples, 'sightline_db_pool_max_connections', { pool: 'api' })).toBe(max);
    expect(sampleValue((await scrape()).samples, 'sightline_db_pool_in_flight', { pool: 'api' })).toBe(0);

    // A transaction of the test's own holds an advisory lock; the API's queries queue up behind it.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const holder = sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(7007)`;
      locked();
      await gate;
    });
    await lockHeld;
    const blocked = Promise.all(
      Array.from({ length: max + 2 }, () => stack.app.sql`select pg_advisory_xact_lock(7007)`),
    );
    const transaction = stack.app.sql.begin(async (tx) => tx`select pg_advisory_xact_lock(7007)`);

    expect(sampleValue((await scrape()).samples, 'sightline_db_pool_in_flight', { pool: 'api' })).toBe(max + 3);
    release();
    await Promise.all([holder, blocked, transaction]);
    expect(sampleValue((await scrape()).samples, 'sightline_db_pool_in_flight', { pool: 'api' })).toBe(0);
  });

  it('counts without changing what queries answer, and counts failed ones out', async () => {
    const db = stack.app.sql;
    expect(await db`select 1 as a`.values()).toEqual([[1]]);
    expect(await db`select ${db.unsafe('2')}::int + ${3}::int as sum`).toEqual([{ sum: 5 }]);
    expect(await db`select * from (values ${db([['a', 'x']])}) as t(n, s)`).toEqual([{ n: 'a', s: 'x' }]);
    await expect(db`select 1 / 0`).rejects.toMatchObject({ code: '22012' });
    await expect(db.begin(async (tx) => tx`select 1 / 0`)).rejects.toMatchObject({ code: '22012' });
    expect(await db.begin(async (tx) => (await tx`select 7 as n`)[0].n)).toBe(7);
    expect(sampleValue((await scrape()).samples, 'sightline_db_pool_in_flight', { pool: 'api' })).toBe(0);
  });

  it("serves Node's process metrics and needs no key", async () => {
    const { samples } = await scrape();
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name.startsWith('nodejs_eventloop_lag'))).toBe(true);
  });
});
