import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Queue, Worker } from 'bullmq';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { testRedis } from '../support/services';

// The worker's log lines about a job carry the x-request-id of the API request(s) it came from, so one
// id finds a request's lines in both processes. A span-write job holds the spans of many requests.

type Line = Record<string, unknown> & { msg: string };
const lines: Line[] = [];
const stream = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
    done();
  },
});
// Nothing listens on port 9: every completion fails at once, and the worker logs it.
const {
  stack,
  orgs: [org],
} = useStack({
  workerLog: pino({ level: 'info' }, stream),
  env: {
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    OPENAI_API_KEY: 'sk-none',
    PROVIDER_MAX_RETRIES: '0',
    COMPLETION_TIMEOUT_MS: '2000',
  },
  orgs: ['org'],
});

async function lineWith(predicate: (line: Line) => boolean): Promise<Line> {
  for (let i = 0; i < 300; i++) {
    const found = lines.find(predicate);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no such worker log line among ${lines.length}: ${JSON.stringify(lines.slice(-5))}`);
}

describe("the worker's log lines", () => {
  it('carry the request id of a failed completion', async () => {
    const res = await call(stack.app, org.key, 'POST', '/completion', {
      llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.json().status).toBe('error');
    const reqId = res.headers['x-request-id'];
    const line = await lineWith((l) => l.msg === 'completion failed' && l.traceId === res.json().trace_id);
    expect(line).toMatchObject({ reqId, queue: 'completion' });
  });

  it('carry the request id of an experiment finish', async () => {
    const project = (await call(stack.app, org.key, 'POST', '/project', { name: 'logs' })).json();
    const experiment = (
      await call(stack.app, org.key, 'POST', '/experiment', { name: 'logs', project_uuid: project.uuid })
    ).json();
    expect(experiment.uuid).toEqual(expect.any(String));
    const res = await call(stack.app, org.key, 'POST', `/experiment/${experiment.uuid}/finished`, {});
    expect(res.statusCode).toBe(200);
    const line = await lineWith((l) => l.msg === 'experiment finished' && l.experiment === experiment.uuid);
    expect(line).toMatchObject({ reqId: res.headers['x-request-id'], queue: 'experiment-finalize' });
  });

  it('name the request of each span a failed span-write job held', async () => {
    const project_id = (await call(stack.app, org.key, 'POST', '/project', { name: 'refused-logs' })).json().uuid;
    const bad = randomUUID(),
      good = randomUUID();
    // A NUL inside jsonb passes the queue schema but not PostgreSQL (the API strips it; a raw event does not).
    const event = (trace_id: string, metadata: Record<string, unknown>) => ({
      kind: 'create' as const,
      organization_id: org.id,
      trace_id,
      pending_root: trace_id,
      fields: { project_id, metadata },
    });
    await stack.app.acceptSpanEvents([event(good, { a: 'fine' }), event(bad, { a: 'x\u0000y' })], 'req-refused');

    const refused = await lineWith(
      (l) => l.msg === 'span events refused by PostgreSQL; dropped' && JSON.stringify(l.refused).includes(bad),
    );
    expect(refused.refused).toEqual([expect.objectContaining({ trace_id: bad, reqId: 'req-refused' })]);
    const failed = await lineWith((l) => l.msg === 'job failed' && l.jobId === refused.jobId);
    expect(failed).toMatchObject({ queue: 'span-write', reqId: 'req-refused' });
  });

  it('name the request of a job found stalled, and of its failure', async () => {
    await stack.stopWorker();
    const redis = testRedis();
    const queue = new Queue('completion', { connection: redis, prefix: stack.prefix });
    const holder = new Worker('completion', undefined, {
      connection: redis,
      prefix: stack.prefix,
      lockDuration: 300,
      autorun: false,
    });
    try {
      const job = await queue.add('completion', { request_id: 'req-stalled' });
      // Taken, and its lock never renewed: as a worker that died holding it would leave it.
      expect((await holder.getNextJob(randomUUID()))?.id).toBe(job.id);
      await stack.startWorker();
      expect(
        await lineWith(
          (l) =>
            l.msg === 'job stalled: its worker stopped answering' && l.queue === 'completion' && l.jobId === job.id,
        ),
      ).toMatchObject({ reqId: 'req-stalled' });
      const failed = await lineWith((l) => l.msg === 'job failed' && l.queue === 'completion' && l.jobId === job.id);
      expect(failed, JSON.stringify(failed)).toMatchObject({ reqId: 'req-stalled', queue: 'completion' });
    } finally {
      await Promise.all([holder.close(), queue.close()]);
      redis.disconnect();
    }
  }, 60_000);

  it('come from span events that carry the request id the API gave them', async () => {
    await stack.stopWorker();
    try {
      const res = await call(stack.app, org.key, 'POST', '/trace_log', {
        trace_id: randomUUID(),
        project_name: 'logs',
        output: 'o',
      });
      expect(res.statusCode).toBe(200);
      const [job] = await stack.app.spanWrites[0]!.queue.getWaiting();
      expect(job.data.events.map((e: { request_id?: string }) => e.request_id)).toEqual([res.headers['x-request-id']]);
    } finally {
      await stack.startWorker();
    }
  });
});
