import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys, takeSequenceNumbers } from '@sightline/queues';
import { composeRedisPersistence, createChaosStack, sleep, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient, type ApiClient } from './lib/http';
import { acknowledged, newSpan, outcomeOf, spanLoad, tally } from './lib/load';

// Fault 4: Redis is killed (SIGKILL) under load and restarted on the same data directory. With
// `appendonly yes` and `appendfsync always` (docker-compose.yml), Redis writes a command to its append-only
// file before it answers, so every write the API acknowledged (its job was in Redis) is still there.

let stack: ChaosStack;

beforeAll(async () => {
  // The fault runs on docker-compose.yml's own setting, which must be the one this test shows is needed.
  expect(composeRedisPersistence()).toEqual({ appendonly: true, appendfsync: 'always' });
  stack = await createChaosStack('redis-aof');
});
afterAll(async () => stack?.close());

/** The statuses of reads of these spans (a sample): a span whose write was not acknowledged must read 404 or 200, never 503. */
async function readStatuses(client: ApiClient, ids: readonly string[]) {
  const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 50)) === 0);
  return tally(
    await Promise.all(sample.map(async (id) => ({ outcome: outcomeOf(await client.get(`/trace_log/${id}`)) }))),
  );
}

describe('Redis killed and restarted on its append-only file', () => {
  it('loses no acknowledged span, and leaves no read waiting for a write that was not', async () => {
    const api = await stack.startApi();
    const worker = await stack.startWorker();
    const client = () => apiClient(api.base, stack.key);
    const project = 'chaos';

    // What each fsync policy costs the write path, on this machine, under the same load (taken in turns,
    // so that the growing backlog weighs on both alike).
    const accepted = { everysec: 0, always: 0 };
    for (const policy of ['everysec', 'always', 'always', 'everysec'] as const) {
      await stack.redisClient.config('SET', 'appendfsync', policy);
      const probe = spanLoad(client, { lanes: 4, batchSize: 100, pauseMs: 0, project });
      await sleep(3000);
      await probe.stop();
      accepted[policy] += probe.acked.length;
    }
    const rates = { everysec: Math.round(accepted.everysec / 6), always: Math.round(accepted.always / 6) };
    // Back to the setting under test before the kill.
    await stack.redisClient.config('SET', 'appendfsync', composeRedisPersistence().appendfsync);
    await stack.waitForDrain();

    const load = spanLoad(client, { lanes: 3, batchSize: 50, pauseMs: 10, project });
    await sleep(4000);
    const killedAt = Date.now();
    await stack.redis!.kill();
    await sleep(2000);
    const restartAt = Date.now();
    await stack.redis!.start();
    const upAt = Date.now();
    await sleep(4000);
    await load.stop();
    const firstWriteAt = load.records.find((r) => r.sentAt >= upAt && r.outcome === '200')?.doneAt;
    // An API node that died between numbering its spans and queueing them leaves their marks behind.
    const orphan = randomUUID();
    await takeSequenceNumbers(stack.redisClient, redisKeys(stack.prefix), [
      { organization_id: stack.organizationId, trace_id: orphan, pending_root: orphan },
    ]);
    const orphanBefore = outcomeOf(await client().get(`/trace_log/${orphan}`));
    const drainMs = await stack.waitForDrain();
    const stored = await stack.storedCount(load.acked);
    const failed = (await stack.jobCounts()).failed;
    const unackedReads = await readStatuses(client(), load.unacked);
    const orphanAfter = outcomeOf(await client().get(`/trace_log/${orphan}`));
    const released = (worker.output().match(/"released":(\d+)/g) ?? []).reduce(
      (n, m) => n + Number(m.split(':')[1]),
      0,
    );

    // The control: the same kill with the append-only file switched off loses what was acknowledged
    // since (the worker is stopped, so the spans are still queued when Redis dies).
    await worker.signal('SIGTERM');
    await stack.redisClient.config('SET', 'appendonly', 'no');
    const unprotected: string[] = [];
    for (let i = 0; i < 5; i++)
      unprotected.push(
        ...acknowledged(
          await client().post('/trace_logs/batch', { trace_logs: Array.from({ length: 200 }, () => newSpan(project)) }),
        ),
      );
    await stack.redis!.kill();
    await stack.redis!.start();
    await stack.startWorker();
    await stack.waitForDrain();
    const unprotectedStored = await stack.storedCount(unprotected);

    const figures = {
      accepted_spans_per_s: { appendfsync_everysec: rates.everysec, appendfsync_always: rates.always },
      redis_down_s: seconds(upAt - killedAt),
      redis_restart_with_aof_load_s: seconds(upAt - restartAt),
      writes: tally(load.records),
      first_acknowledged_write_after_restart_s: firstWriteAt && seconds(firstWriteAt - upAt),
      spans_acknowledged: load.acked.length,
      spans_stored: stored,
      spans_lost: load.acked.length - stored,
      drain_after_load_s: seconds(drainMs),
      failed_jobs: failed,
      reads_of_unacknowledged_spans: unackedReads,
      pending_marks_released_by_sweep: released,
      orphaned_marks_read: { before_sweep: orphanBefore, after_sweep: orphanAfter },
      control_without_aof: { spans_acknowledged: unprotected.length, spans_stored: unprotectedStored },
    };
    recordFigures('redis-aof', figures);

    expect(load.records.some((r) => r.sentAt > killedAt && r.doneAt < restartAt && r.outcome === '503')).toBe(true);
    expect(load.acked.length).toBeGreaterThan(1000);
    expect(stored).toBe(load.acked.length);
    expect(failed).toBe(0);
    expect(unackedReads['503']).toBeUndefined();
    expect(orphanBefore).toBe('503');
    expect(orphanAfter).toBe('404');
    expect(unprotected.length).toBe(1000);
    expect(unprotectedStored).toBeLessThan(unprotected.length);
    // The API's own connection to Redis comes back on its reconnect backoff: a read is due once it says
    // it is ready again, and until then its honest answer is 503.
    await expect.poll(async () => outcomeOf(await client().readyz()), { interval: 100, timeout: 30_000 }).toBe('200');
    const last = await client().get(`/trace_log/${load.acked.at(-1)}`);
    expect(outcomeOf(last), JSON.stringify(last)).toBe('200');
  });
});
