import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sleep } from '../fakes/fake-server';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [org],
} = useStack({ orgs: ['org'] });

describe('span-write worker', () => {
  it('fails a job PostgreSQL refuses at once, clears its pending marks, and keeps its batch neighbours', async () => {
    const project_id = (await call(stack.app, org.key, 'POST', '/project', { name: 'refused' })).json().uuid;
    const bad = randomUUID(),
      good = randomUUID();
    // A NUL inside jsonb passes the queue schema but not PostgreSQL (the API strips it; a raw job does not).
    const event = (trace_id: string, metadata: Record<string, unknown>) => ({
      kind: 'create' as const,
      organization_id: org.id,
      trace_id,
      pending_root: trace_id,
      fields: { project_id, metadata },
    });
    await Promise.all([
      stack.app.acceptSpanEvents([event(bad, { a: 'x\u0000y' })], 'req-bad'),
      stack.app.acceptSpanEvents([event(good, { a: 'fine' })], 'req-good'),
    ]);

    let failed: { failedReason: string; attemptsMade: number }[] = [];
    for (let i = 0; i < 50 && failed.length === 0; i++) {
      failed = await stack.app.spanWrites[0]!.queue.getFailed();
      if (!failed.length) await sleep(100);
    }
    expect(failed).toHaveLength(1);
    expect(failed[0].failedReason).toMatch(/refused by PostgreSQL/);
    expect(failed[0].attemptsMade).toBe(1);
    expect(await stack.app.redis.scard(stack.app.keys.pendingSpan(org.id, bad))).toBe(0);
    expect((await readTrace(stack.app, org.key, good)).json().metadata).toEqual({ a: 'fine' });
    expect((await readTrace(stack.app, org.key, bad)).statusCode).toBe(404);
  });

  it('keeps the events of a job that PostgreSQL accepts when it refuses one of them', async () => {
    const project_id = (await call(stack.app, org.key, 'POST', '/project', { name: 'refused-one' })).json().uuid;
    const before = (await stack.app.spanWrites[0]!.queue.getFailed()).length;
    const bad = randomUUID(),
      good = randomUUID();
    const event = (trace_id: string, metadata: Record<string, unknown>) => ({
      kind: 'create' as const,
      organization_id: org.id,
      trace_id,
      pending_root: trace_id,
      fields: { project_id, metadata },
    });
    // One call: the events travel in one job, as the spans of concurrent requests do.
    await stack.app.acceptSpanEvents([event(good, { a: 'kept' }), event(bad, { a: 'x\u0000y' })], 'req-mixed');
    expect((await readTrace(stack.app, org.key, good)).json().metadata).toEqual({ a: 'kept' });
    expect((await readTrace(stack.app, org.key, bad)).statusCode).toBe(404);
    const failed = await stack.app.spanWrites[0]!.queue.getFailed();
    expect(failed.length).toBe(before + 1);
    expect(failed.map((j) => j.failedReason)).toContainEqual(
      expect.stringMatching(/^1 of 2 span events refused by PostgreSQL/),
    );
  });

  it("fails an event whose field PostgreSQL refuses alone, trusting the fields' producer (the job is not checked field by field)", async () => {
    const project_id = (await call(stack.app, org.key, 'POST', '/project', { name: 'wrong-type' })).json().uuid;
    const bad = randomUUID(),
      good = randomUUID();
    const event = (trace_id: string, fields: Record<string, unknown>) => ({
      kind: 'create' as const,
      organization_id: org.id,
      trace_id,
      pending_root: trace_id,
      fields: { project_id, ...fields },
    });
    // Producers check fields (the API's request schemas); a raw job with a wrong type reaches PostgreSQL,
    // which refuses that event only. Its neighbour in the job is stored, without the name no schema knows.
    await stack.app.acceptSpanEvents(
      [event(good, { input_tokens: 7, not_a_field: 'dropped' }), event(bad, { input_tokens: 'many' } as never)],
      'req-wrong-type',
    );
    const stored = (await readTrace(stack.app, org.key, good)).json();
    expect(stored.input_tokens).toBe(7);
    expect(stored).not.toHaveProperty('not_a_field');
    expect((await readTrace(stack.app, org.key, bad)).statusCode).toBe(404);
  });
});
