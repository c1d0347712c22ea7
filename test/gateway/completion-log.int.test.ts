import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { takeLocks, transaction } from '@sightline/db';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';

// Issue 39: a completion costs one job. Its log is written by the worker that answered it, not queued as a
// span-write job of its own; read-your-writes holds as before (a read right after the answer finds it).

const {
  gw,
  sql,
  orgs: [org],
} = useGateway({ orgs: ['org'], env: { ANTHROPIC_MAX_CONCURRENT: '1' } });
const { key } = org;

describe("a completion's log", () => {
  it('is written by the worker that answered, with no span-write job: the log is read while the queues are paused', async () => {
    const queues = gw.stack.app.spanWrites.map((producer) => producer.queue);
    // Paused, the span-write workers take no job: a log queued as one would wait, and so would its read.
    await Promise.all(queues.map((q) => q.pause()));
    try {
      const trace_id = randomUUID();
      const res = await call(gw.stack.app, key, 'POST', '/completion', {
        trace_id,
        project_name: 'one-job',
        llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage('one job')] },
      });
      expect(res.statusCode).toBe(200);
      const counts = await Promise.all(
        queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
      );
      expect(counts.flatMap((c) => Object.values(c)).every((n) => n === 0)).toBe(true);
      const log = await readTrace(gw.stack.app, key, trace_id);
      expect(log.statusCode).toBe(200);
      expect(log.json()).toMatchObject({ trace_id, output: 'echo: one job' });
    } finally {
      await Promise.all(queues.map((q) => q.resume()));
    }
  });
});

describe("a completion in its provider's lane", () => {
  it('gives its place to the next call once answered, while PostgreSQL still holds back its log', async () => {
    // Anthropic's lane admits one call at a time. The logs' writes wait for the locks held here, which
    // their writer takes first (span-writes.ts).
    const traceIds = [randomUUID(), randomUUID(), randomUUID()];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = transaction(sql, async (tx) => {
      await takeLocks(
        tx,
        traceIds.map((id) => `span/${org.id}/${id}`),
      );
      locked();
      await held;
    });
    await lockTaken;
    try {
      const answers = await Promise.all(
        traceIds.map((trace_id, i) =>
          call(gw.stack.app, key, 'POST', '/completion', {
            trace_id,
            llm_configuration: {
              provider: 'anthropic',
              model: 'claude-3-5-haiku-20241022',
              messages: [userMessage(`in turn ${i}`)],
            },
          }),
        ),
      );
      // Each call waited only for the one before it in the lane, not for that one's log.
      answers.forEach((res, i) =>
        expect(res.json()).toMatchObject({ status: 'success', content: `echo: in turn ${i}` }),
      );
      expect(gw.anthropic.maxInFlight).toBe(1);
      const [{ stored }] = await sql<{ stored: number }[]>`
        select count(*)::int as stored from spans where organization_id = ${org.id} and trace_id in ${sql(traceIds)}`;
      expect(stored).toBe(0);
    } finally {
      release();
      await holder;
    }
    for (const [i, trace_id] of traceIds.entries()) {
      const log = await readTrace(gw.stack.app, key, trace_id);
      expect(log.json()).toMatchObject({ trace_id, output: `echo: in turn ${i}` });
    }
  });
});
