import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@sightline/db';
import { createProducer, redisKeys, type QueuePayload } from '@sightline/queues';
import { spanWriteProcessor } from '../../apps/worker/src/processors/span-write.processor';
import { traceSettling } from '../../apps/worker/src/processors/trace-settle.processor';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { databaseUrl, testRedis } from '../support/services';

// The worker stays stopped while requests are accepted, so the test decides in which order the queued
// jobs reach the real span-write processor: reversed, repeated, or never.
const {
  stack,
  sql,
  orgs: [{ key }],
} = useStack({ worker: false, orgs: ['org'] });
let process: (payload: QueuePayload<'span-write'>) => Promise<unknown>;
let release: () => Promise<void>;

beforeAll(async () => {
  const workerSql = createSql(databaseUrl(), { max: 2 });
  const redis = testRedis();
  const evals = createProducer('eval', redis, stack.prefix);
  const settles = createProducer('trace-settle', redis, stack.prefix);
  const processor = spanWriteProcessor({
    sql: workerSql,
    redis,
    keys: redisKeys(stack.prefix),
    homeKeys: redisKeys(stack.prefix),
    batchSize: 100,
    evals,
    settling: traceSettling({ sql: workerSql, settles }),
  });
  process = (payload) => processor(payload, { id: 'test' } as never, pino({ level: 'silent' }));
  release = async () => {
    await Promise.all([evals.close(), settles.close()]);
    await Promise.all([redis.quit(), workerSql.end()]);
  };
});
afterAll(() => release());

async function takeQueuedJobs(): Promise<QueuePayload<'span-write'>[]> {
  const queue = stack.app.spanWrites[0]!.queue;
  const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
  jobs.sort((a, b) => Number(a.id) - Number(b.id));
  await Promise.all(jobs.map((j) => j.remove()));
  return jobs.map((j) => j.data);
}

/** A span under `root` (its parent too). */
const postChild = (root: string, child: string, project_name: string) =>
  call(stack.app, key, 'POST', '/trace_log', {
    trace_id: child,
    root_trace_id: root,
    parent_trace_id: root,
    project_name,
  });

const storedState = async (trace_id: string) => {
  const rows =
    await sql`select status, error, output, feedback_score, target, created from spans where trace_id = ${trace_id}`;
  return rows;
};

describe('arrival order does not matter', () => {
  it('update and feedback before their create, and the create twice, give the in-order result once', async () => {
    const trace_id = randomUUID();
    await call(stack.app, key, 'POST', '/trace_log', {
      trace_id,
      project_name: 'order',
      status: 'success',
      output: 'first',
    });
    await call(stack.app, key, 'PUT', '/trace_log', {
      trace_id,
      field_name_to_value_map: { status: 'error', error: 'later' },
    });
    await call(stack.app, key, 'POST', '/feedback', { trace_id, score: 0.75, target: 'gold' });
    const [create, update, feedback] = await takeQueuedJobs();

    await process(feedback);
    await process(update);
    expect(await storedState(trace_id)).toMatchObject([{ created: false }]);
    expect((await call(stack.app, key, 'POST', '/get_trace_logs', { project_name: 'order' })).json().total).toBe(0);
    await process(create);
    await process(create); // BullMQ redelivery
    await process(update);

    expect(await storedState(trace_id)).toEqual([
      { status: 'error', error: 'later', output: 'first', feedback_score: 0.75, target: 'gold', created: true },
    ]);
  });

  it('a client retry of the create accepted after an update does not undo the update', async () => {
    const trace_id = randomUUID();
    const body = { trace_id, project_name: 'order', status: 'success', output: 'v1' };
    await call(stack.app, key, 'POST', '/trace_log', body);
    await call(stack.app, key, 'PUT', '/trace_log', {
      trace_id,
      field_name_to_value_map: { status: 'error', error: 'e' },
    });
    await call(stack.app, key, 'POST', '/trace_log', body);
    for (const job of await takeQueuedJobs()) await process(job);
    expect(await storedState(trace_id)).toMatchObject([{ status: 'error', error: 'e', output: 'v1' }]);
  });

  it('a client retry of the create changes nothing and leaves one span', async () => {
    const trace_id = randomUUID();
    const body = { trace_id, project_name: 'order', output: 'same' };
    await call(stack.app, key, 'POST', '/trace_log', body);
    await call(stack.app, key, 'POST', '/trace_log', body);
    const jobs = await takeQueuedJobs();
    expect(jobs).toHaveLength(2);
    await Promise.all(jobs.map(process));
    const [{ count }] = await sql`select count(*)::int from spans where trace_id = ${trace_id}`;
    expect(count).toBe(1);
  });

  it('a child processed before its parent gets its depth once the parent arrives', async () => {
    const root = randomUUID(),
      child = randomUUID();
    await call(stack.app, key, 'POST', '/trace_log', { trace_id: root, project_name: 'order' });
    await postChild(root, child, 'order');
    const [parentJob, childJob] = await takeQueuedJobs();
    await process(childJob);
    await process(parentJob);
    const tree = (await call(stack.app, key, 'GET', `/trace_log/${root}`)).json();
    expect(tree.children_ids).toEqual([child]);
    expect(tree.children[0]).toMatchObject({ depth: 1, execution_order: 1 });
  });

  it('an update that never gets its create never appears', async () => {
    const trace_id = randomUUID();
    await call(stack.app, key, 'PUT', '/trace_log', {
      trace_id,
      root_trace_id: trace_id,
      field_name_to_value_map: { output: 'orphan' },
    });
    for (const job of await takeQueuedJobs()) await process(job);
    expect((await call(stack.app, key, 'GET', `/trace_log/${trace_id}`)).statusCode).toBe(404);
    const list = (
      await call(stack.app, key, 'POST', '/get_trace_logs', {
        filter_field: 'output',
        filter_operator: 'equals',
        filter_value: 'orphan',
      })
    ).json();
    expect(list.total).toBe(0);
  });
});

describe('read-your-writes', () => {
  it('GET waits for a write accepted before it, however slow the worker is to start', async () => {
    const trace_id = randomUUID();
    expect(
      (await call(stack.app, key, 'POST', '/trace_log', { trace_id, project_name: 'ryw', output: 'v1' })).statusCode,
    ).toBe(200);
    setTimeout(async () => {
      for (const job of await takeQueuedJobs()) await process(job);
    }, 400);
    const res = await call(stack.app, key, 'GET', `/trace_log/${trace_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().output).toBe('v1');
  });

  it("GET of a root waits for its children's pending writes too", async () => {
    const root = randomUUID(),
      child = randomUUID();
    await call(stack.app, key, 'POST', '/trace_log', { trace_id: root, project_name: 'ryw' });
    for (const job of await takeQueuedJobs()) await process(job);
    await postChild(root, child, 'ryw');
    setTimeout(async () => {
      for (const job of await takeQueuedJobs()) await process(job);
    }, 300);
    expect((await call(stack.app, key, 'GET', `/trace_log/${root}`)).json().children_ids).toEqual([child]);
  });

  it("marks a root span in its own pending set only, a child in its own and its root's, and clears them all", async () => {
    const root = randomUUID(),
      child = randomUUID();
    const { redis, keys } = stack.app;
    await call(stack.app, key, 'POST', '/trace_log', { trace_id: root, project_name: 'ryw' });
    await postChild(root, child, 'ryw');
    const jobs = await takeQueuedJobs();
    const [org] = jobs.flatMap((j) => j.events.map((e) => e.organization_id));
    const marks = async () =>
      Promise.all([
        redis.scard(keys.pendingSpan(org, root)),
        redis.scard(keys.pendingRoot(org, root)),
        redis.scard(keys.pendingSpan(org, child)),
      ]);
    // A read of the trace waits on the root's own set for the root (a second mark, in its root set, would cost
    // three more Redis commands for nothing), and on its root set for the child.
    expect(await marks()).toEqual([1, 1, 1]);
    for (const job of jobs) await process(job);
    expect(await marks()).toEqual([0, 0, 0]);
  });

  it('the wait is bounded: with no worker, GET answers 503 after about 2 s, never 404', async () => {
    const trace_id = randomUUID();
    await call(stack.app, key, 'POST', '/trace_log', { trace_id, project_name: 'ryw' });
    const started = Date.now();
    const res = await call(stack.app, key, 'GET', `/trace_log/${trace_id}`);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Date.now() - started).toBeLessThan(3000);
    await takeQueuedJobs();
  });
});
