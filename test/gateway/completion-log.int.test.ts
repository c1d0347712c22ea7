import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';

// Issue 39: a completion costs one job. Its log is written by the worker that answered it, not queued as a
// span-write job of its own; read-your-writes holds as before (a read right after the answer finds it).

const {
  gw,
  orgs: [{ key }],
} = useGateway({ orgs: ['org'] });

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
