import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  clearPending,
  createProducer,
  createSpanIntake,
  forgetLostSpanEvents,
  holdPending,
  journal,
  PENDING_TTL_SECONDS,
  recoverKeptLogs,
  redisKeys,
  releaseForgottenMarks,
  releasePending,
  SpanBacklogFullError,
  startPendingUpkeep,
  sweepUnconfirmed,
  takeSequenceNumbers,
  takeWatermark,
  waitUntilApplied,
  type RedisKeys,
} from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { EARLY_REFUSAL_MS } from '../../apps/api/src/services/span-intake';
import { buildStack, call, readTrace, type TestStack } from '../support/app';
import { useStack } from '../support/fixtures';
import { otlpJson, postOtlp, spanIdHex, traceIdHex } from '../support/otlp';
import { newOrganization, uniquePrefix, useServices } from '../support/services';

const { sql, redis } = useServices();

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const quiet = { warn: () => {}, debug: () => {} };

const span = (trace_id = randomUUID()) => ({ trace_id, project_name: 'backlog', trace_name: 'span', output: 'o' });

/** Outlasts a node's early refusals after its last refusal (timers may fire a little early). */
const pastEarlyRefusals = () => sleep(EARLY_REFUSAL_MS + 100);

/** Span events accepted and not yet written. */
const spanBacklog = (redis: Redis, keys: RedisKeys) => redis.zcard(keys.spanBacklog);

/** Asks `read` until it answers `want`, for at most 20 s. */
const eventually = <T>(read: () => Promise<T>, want: T) =>
  expect.poll(read, { timeout: 20_000, interval: 100 }).toBe(want);

async function waitingJobEvents(stack: TestStack): Promise<SpanEvent[]> {
  const jobs = await stack.app.spanWrites[0]!.queue.getJobs(['waiting']);
  return jobs.flatMap((j) => (j.data as { events: SpanEvent[] }).events);
}

describe('span-write backlog bound (SPAN_BACKLOG_LIMIT)', () => {
  const {
    stack,
    orgs: [org],
  } = useStack({ worker: false, env: { SPAN_BACKLOG_LIMIT: '3' }, orgs: ['backlog'] });
  let keys: RedisKeys;
  beforeAll(() => {
    keys = redisKeys(stack.prefix);
  });

  it('refuses every span write with 429 once the limit is reached, keeping nothing of it, and accepts again once drained', async () => {
    const accepted = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of accepted)
      expect((await call(stack.app, org.key, 'POST', '/trace_log', span(id))).statusCode).toBe(200);
    expect(await spanBacklog(redis, keys)).toBe(3);
    const seqBefore = await redis.get(keys.seq);

    const refusedId = randomUUID();
    const refused = await call(stack.app, org.key, 'POST', '/trace_log', span(refusedId));
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toEqual({ detail: expect.any(String) });
    // Every other route that writes span events is bounded by the same check.
    const others = [
      await call(stack.app, org.key, 'POST', '/trace_logs/batch', { trace_logs: [span(refusedId)] }),
      await call(stack.app, org.key, 'PUT', '/trace_log', {
        trace_id: refusedId,
        field_name_to_value_map: { output: 'x' },
      }),
      await call(stack.app, org.key, 'POST', '/feedback', { trace_id: refusedId, score: 0.5 }),
    ];
    for (const res of others) {
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toEqual({ detail: expect.any(String) });
    }
    // OTLP exporters retry a 429 after Retry-After; its body is OTLP's Status.
    const otlp = await postOtlp(
      stack.app,
      org.key,
      otlpJson([{ traceId: traceIdHex(), spanId: spanIdHex(), name: 'otel' }]),
    );
    expect(otlp.statusCode).toBe(429);
    expect(otlp.headers['retry-after']).toBe('5');
    expect(otlp.json()).toEqual({ code: 8, message: expect.any(String) });

    // Nothing of the refused requests was numbered, marked pending or queued.
    expect(await redis.get(keys.seq)).toBe(seqBefore);
    expect(await redis.scard(keys.pendingSpan(org.id, refusedId))).toBe(0);
    expect(await redis.zcard(keys.pendingOrganization(org.id))).toBe(3);
    expect(await spanBacklog(redis, keys)).toBe(3);
    const queued = await waitingJobEvents(stack);
    expect(queued.map((e) => e.trace_id).sort()).toEqual([...accepted].sort());

    await stack.startWorker();
    await eventually(() => spanBacklog(redis, keys), 0);
    await pastEarlyRefusals(); // after its last refusal, the node refuses for a moment without asking Redis
    const again = await call(stack.app, org.key, 'POST', '/trace_log', span(refusedId));
    expect(again.statusCode).toBe(200);
    for (const id of [...accepted, refusedId]) expect((await readTrace(stack.app, org.key, id)).statusCode).toBe(200);
    await stack.stopWorker();
  });

  it('does not drift when a job is applied twice (a redelivery after a worker crash)', async () => {
    await stack.stopWorker();
    await eventually(() => spanBacklog(redis, keys), 0);
    for (let i = 0; i < 2; i++)
      expect((await call(stack.app, org.key, 'POST', '/trace_log', span())).statusCode).toBe(200);
    const events = await waitingJobEvents(stack);
    expect(events).toHaveLength(2);
    await stack.startWorker();
    await eventually(() => spanBacklog(redis, keys), 0);
    await stack.stopWorker();
    // The same job's commit acknowledged a second time: a counter would now stand at -2.
    await clearPending(redis, keys, events);
    expect(await spanBacklog(redis, keys)).toBe(0);
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span())).statusCode).toBe(200);
    expect(await spanBacklog(redis, keys)).toBe(1);
  });

  it("keeps the API's memory flat while it refuses: refused bodies are not held anywhere", async () => {
    await stack.stopWorker();
    while ((await call(stack.app, org.key, 'POST', '/trace_log', span())).statusCode === 200);
    const queuedBefore = (await waitingJobEvents(stack)).length;
    const big = { ...span(), metadata: { blob: 'x'.repeat(10_000) } };
    // Over real HTTP: the early refusal answers before the body is read, and the server discards it
    // (through inject, the unread payloads stayed in memory: 110 MB after these 10,000 requests).
    const base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
    const refuse = async (n: number) => {
      for (let i = 0; i < n; i += 50) {
        const statuses = await Promise.all(
          Array.from({ length: 50 }, async () => {
            const body = JSON.stringify({ ...big, trace_id: randomUUID() });
            const res = await fetch(`${base}/api/svc/v1/trace_log`, {
              method: 'POST',
              headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
              body,
            });
            await res.arrayBuffer();
            return res.status;
          }),
        );
        expect(statuses.filter((status) => status !== 429)).toEqual([]);
      }
    };
    const heapAfterGc = () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    await refuse(1_000); // warm-up: caches, JIT, pools
    const before = heapAfterGc();
    await refuse(10_000); // 100 MB of bodies
    const grown = heapAfterGc() - before;
    expect(grown, `heap grew by ${(grown / 1e6).toFixed(1)} MB`).toBeLessThan(8_000_000);
    expect((await waitingJobEvents(stack)).length).toBe(queuedBefore);
  });

  it('refuses span writes without reading them for a moment after a refusal, and nothing else', async () => {
    // The backlog is still full from the test above; its early refusals end first, so that the next
    // refusal comes from Redis and opens a whole new moment.
    const malformed = () =>
      stack.app.inject({
        method: 'POST',
        url: '/api/svc/v1/trace_log',
        headers: { 'x-api-key': org.key, 'content-type': 'application/json' },
        payload: '{"trace_id": ',
      });
    await pastEarlyRefusals();
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span())).statusCode).toBe(429);
    const early = await malformed();
    expect(early.statusCode).toBe(429);
    expect(early.headers['retry-after']).toBe('5');
    expect((await call(stack.app, org.key, 'GET', `/trace_log/${randomUUID()}`)).statusCode).toBe(404);
    expect((await call(stack.app, org.key, 'POST', '/project', { name: 'not-a-span' })).statusCode).toBe(200);
    await pastEarlyRefusals();
    // Read again once the moment has passed: a malformed body is the client's error, a valid one meets the bound.
    expect((await malformed()).statusCode).toBe(422);
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span())).statusCode).toBe(429);
  });
});

describe('no bound', () => {
  it('accepts without limit when SPAN_BACKLOG_LIMIT is 0', async () => {
    const stack = await buildStack({ worker: false, env: { SPAN_BACKLOG_LIMIT: '0' } });
    try {
      const { key } = await newOrganization(sql, 'unbounded');
      const results = await Promise.all(
        Array.from({ length: 20 }, () => call(stack.app, key, 'POST', '/trace_log', span())),
      );
      expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(await spanBacklog(redis, redisKeys(stack.prefix))).toBe(20);
    } finally {
      await stack.close();
    }
  });
});

describe('lost span events leave the backlog', () => {
  const {
    stack,
    orgs: [org],
  } = useStack({ worker: false, orgs: ['lost'] });
  let keys: RedisKeys;
  beforeAll(() => {
    keys = redisKeys(stack.prefix);
  });
  const forget = () => forgetLostSpanEvents(redis, keys, stack.app.spanWrites[0]!.queue);

  it('releases the events of a span-write job that failed for good: out of the backlog, and reads stop waiting', async () => {
    const traceId = randomUUID();
    const marks = { organization_id: org.id, trace_id: traceId, pending_root: traceId };
    const [seq] = await takeSequenceNumbers(redis, keys, [marks]);
    // A job whose payload cannot parse fails at once, without retries, and never writes its event.
    await stack.app.spanWrites[0]!.queue.add('span-write', {
      events: [{ ...marks, seq, kind: 'create', fields: 'not an object' }],
    });
    expect(await spanBacklog(redis, keys)).toBe(1);
    expect((await call(stack.app, org.key, 'GET', `/trace_log/${traceId}`)).statusCode).toBe(503);

    await stack.startWorker();
    try {
      await eventually(() => stack.app.spanWrites[0]!.queue.getFailedCount(), 1);
      await eventually(() => spanBacklog(redis, keys), 0);
      // The event is younger than the in-flight grace: only the failure released it.
      expect((await call(stack.app, org.key, 'GET', `/trace_log/${traceId}`)).statusCode).toBe(404);
    } finally {
      await stack.stopWorker();
    }
  });

  it('forgets events that never reached a job once the queue is empty, but not recent ones nor while jobs wait', async () => {
    await forget();
    expect(await spanBacklog(redis, keys)).toBe(0);
    const waiting = randomUUID();
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span(waiting))).statusCode).toBe(200);
    // Numbered, then the API node died before enqueueing: one just now, one (by its score) two minutes ago.
    await takeSequenceNumbers(redis, keys, [{ organization_id: org.id, trace_id: randomUUID() }]);
    const [seconds] = await redis.time();
    const old = (Number(seconds) - 120) * 1_000_000;
    await redis.zadd(keys.spanBacklog, old, old);
    expect(await spanBacklog(redis, keys)).toBe(3);

    // A job still waits: its events might be among the old ones, so nothing is taken.
    expect(await forget()).toBe(0);
    expect(await spanBacklog(redis, keys)).toBe(3);

    await stack.startWorker();
    expect((await readTrace(stack.app, org.key, waiting)).statusCode).toBe(200);
    await stack.stopWorker();
    await forget();
    expect(await redis.zscore(keys.spanBacklog, String(old))).toBeNull();
    // The recent one may still be on its way into a job.
    expect(await spanBacklog(redis, keys)).toBe(1);
  });

  it('releases the marks of events whose queued job was lost, so reads stop waiting for them, and no other marks', async () => {
    const queue = stack.app.spanWrites[0]!.queue;
    const lost = randomUUID();
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span(lost))).statusCode).toBe(200);
    const [lostSeq] = await redis.smembers(keys.pendingSpan(org.id, lost));
    // Queued and confirmed, so no journal entry is left for the sweep; then lost, the queue emptied by hand
    // (a failover can lose a queued job the same way, its marks kept by the new master).
    await eventually(() => redis.zscore(journal(keys).index, lostSeq!), null);
    await queue.drain();
    expect((await call(stack.app, org.key, 'GET', `/trace_log/${lost}`)).statusCode).toBe(503);
    // An evaluation held pending, as old as the lost event: not an event's mark, so it stays.
    await holdPending(redis, keys, org.id, 'eval:held', Number(lostSeq));

    expect(await forgetLostSpanEvents(redis, keys, queue, 0)).toBeGreaterThan(0);
    // Accepted after the loss, its job waiting: its marks stay.
    const waiting = randomUUID();
    expect((await call(stack.app, org.key, 'POST', '/trace_log', span(waiting))).statusCode).toBe(200);
    const [waitingSeq] = await redis.smembers(keys.pendingSpan(org.id, waiting));

    expect(await releaseForgottenMarks(redis, keys)).toBeGreaterThan(0);
    expect((await call(stack.app, org.key, 'GET', `/trace_log/${lost}`)).statusCode).toBe(404);
    expect((await redis.zrange(keys.pendingOrganization(org.id), 0, -1)).sort()).toEqual(
      [waitingSeq, 'eval:held'].sort(),
    );
    expect(await redis.smembers(keys.pendingSpan(org.id, waiting))).toEqual([waitingSeq]);
    // Done until events are forgotten again.
    expect(await redis.exists(keys.backlogForgotten)).toBe(0);
    expect(await releaseForgottenMarks(redis, keys)).toBe(0);

    await releasePending(redis, keys, org.id, 'eval:held');
    await stack.startWorker();
    expect((await readTrace(stack.app, org.key, waiting)).statusCode).toBe(200);
    await stack.stopWorker();
  });
});

describe('clearPending', () => {
  it('fails when Redis refuses any of its commands, rather than leave marks behind in silence', async () => {
    const keys = redisKeys(uniquePrefix('clear'));
    const org = randomUUID(),
      trace = randomUUID();
    const [seq] = await takeSequenceNumbers(redis, keys, [{ organization_id: org, trace_id: trace }]);
    const event = { kind: 'create' as const, organization_id: org, trace_id: trace, seq: Number(seq), fields: {} };
    // A key of the wrong type makes one command of the pipeline fail (as a connection lost part-way would).
    await redis.set(keys.pendingRoot(org, trace), 'not a set');
    await expect(clearPending(redis, keys, [{ ...event, pending_root: trace }])).rejects.toThrow(/WRONGTYPE/);
    await redis.del(keys.pendingRoot(org, trace));
    await clearPending(redis, keys, [event]);
    expect(await redis.zcard(keys.pendingOrganization(org))).toBe(0);
  });
});

describe('takeSequenceNumbers with an announcement (a completion answer sent with its log reservation)', () => {
  it('publishes the message only once the events are marked pending, and not at all when they are refused', async () => {
    const keys = redisKeys(uniquePrefix('announce'));
    const channel = `${keys.seq}:announce-test`;
    const subscriber = redis.duplicate();
    const marksWhenHeard: number[] = [];
    const heard: string[] = [];
    await subscriber.subscribe(channel);
    const org = randomUUID();
    subscriber.on('message', (_channel, message) => {
      heard.push(message);
      // Read at once, on another connection: a caller that reads its trace as soon as it has its answer.
      void redis.zcard(keys.pendingOrganization(org)).then((n) => marksWhenHeard.push(n));
    });
    try {
      await takeSequenceNumbers(redis, keys, [{ organization_id: org, trace_id: randomUUID() }], 0, {
        channel,
        message: 'answer 1',
      });
      await expect.poll(() => marksWhenHeard.length).toBe(1);
      expect(heard).toEqual(['answer 1']);
      expect(marksWhenHeard).toEqual([1]);

      // Refused for a full backlog (limit 1, one waiting): nothing is marked and nothing is published.
      await expect(
        takeSequenceNumbers(redis, keys, [{ organization_id: org, trace_id: randomUUID() }], 1, {
          channel,
          message: 'answer 2',
        }),
      ).rejects.toThrow(SpanBacklogFullError);
      await redis.publish(channel, 'after');
      await expect.poll(() => heard.at(-1)).toBe('after');
      expect(heard).toEqual(['answer 1', 'after']);
    } finally {
      await subscriber.quit();
    }
  });
});

describe('createSpanIntake: reserved events queued together', () => {
  it("confirms every caller's reservation once their shared job is queued, so the sweep never takes their marks", async () => {
    const prefix = uniquePrefix('confirm');
    const keys = redisKeys(prefix);
    const producer = createProducer('span-write', redis, prefix);
    const intake = createSpanIntake(redis, producer, keys);
    try {
      const org = randomUUID();
      const event = () => ({ kind: 'create' as const, organization_id: org, trace_id: randomUUID(), fields: {} });
      // Three callers (completions finishing together), each with its own reservation, then one shared job.
      const reserved = await Promise.all([1, 2, 3].map(() => intake.reserve([event()])));
      expect(await redis.zcard(journal(keys).index)).toBe(3);
      await Promise.all(reserved.map((events) => intake.enqueue(events)));
      const jobs = await producer.queue.getJobs(['waiting']);
      expect(jobs.flatMap((j) => (j.data as { events: SpanEvent[] }).events)).toHaveLength(3);
      await expect.poll(() => redis.zcard(journal(keys).index)).toBe(0);
      expect(await redis.hlen(journal(keys).events)).toBe(0);
      // Confirmed, they are not swept: their marks stay until the job is written.
      await sweepUnconfirmed(redis, keys, 0);
      expect(await redis.zcard(keys.pendingOrganization(org))).toBe(3);
    } finally {
      await producer.queue.obliterate({ force: true });
      await producer.close();
    }
  });
});

describe('pending marks past their TTL', () => {
  it('are not waited for, fresh ones are, and a reservation crossing a trim point trims them', async () => {
    const keys = redisKeys(uniquePrefix('stale'));
    const org = randomUUID();
    const accept = (n: number) =>
      takeSequenceNumbers(
        redis,
        keys,
        Array.from({ length: n }, () => ({ organization_id: org, trace_id: randomUUID() })),
      );
    // A mark of an event accepted more than the TTL ago whose job was lost, missed by the sweeps.
    const [fresh] = await accept(1);
    const stale = fresh! - PENDING_TTL_SECONDS * 1e6 - 1e6;
    await redis.zadd(keys.pendingOrganization(org), stale, String(stale));
    const applied = async () =>
      waitUntilApplied(redis, org, [{ keys, watermark: await takeWatermark(redis, keys) }], 300);
    expect(await applied()).toBe(false);
    await redis.zrem(keys.pendingOrganization(org), String(fresh));
    expect(await applied()).toBe(true);
    // 64 numbers at once always cross a multiple of 64.
    expect(await redis.zscore(keys.pendingOrganization(org), String(stale))).not.toBeNull();
    await accept(64);
    expect(await redis.zscore(keys.pendingOrganization(org), String(stale))).toBeNull();
    expect(await redis.zcard(keys.pendingOrganization(org))).toBe(64);
  });
});

describe('recoverKeptLogs: a completion log its worker did not write', () => {
  it('is queued as a job with its numbers after the grace, its marks kept, once; the sweep leaves it alone', async () => {
    const prefix = uniquePrefix('kept');
    const keys = redisKeys(prefix);
    const producer = createProducer('span-write', redis, prefix);
    const intake = createSpanIntake(redis, producer, keys);
    try {
      const org = randomUUID();
      const event = (output: string) => ({
        kind: 'create' as const,
        organization_id: org,
        trace_id: randomUUID(),
        fields: { output },
      });
      // Two logs kept (their worker died before writing them), one reservation without its events.
      const kept = [
        await intake.reserve([event('first'), event('first, attempt')], undefined, true),
        await intake.reserve([event('second')], undefined, true),
      ];
      await intake.reserve([event('not kept')]);
      expect(await spanBacklog(redis, keys)).toBe(4);

      // The sweep releases the reservation without events, and leaves the kept ones to be queued.
      expect(await sweepUnconfirmed(redis, keys, 0)).toBe(1);
      expect(await spanBacklog(redis, keys)).toBe(3);
      expect(await redis.zcard(journal(keys).index)).toBe(2);

      // Within the grace, nothing is queued: the worker may still be writing them.
      expect(await recoverKeptLogs(redis, keys, producer.queue, 60)).toBe(0);
      expect(await recoverKeptLogs(redis, keys, producer.queue, 0)).toBe(3);
      const jobs = await producer.queue.getJobs(['waiting']);
      const queued = jobs.flatMap((j) => (j.data as { events: SpanEvent[] }).events).sort((a, b) => a.seq - b.seq);
      expect(queued).toEqual(kept.flat().sort((a, b) => a.seq - b.seq));
      expect(await redis.zcard(journal(keys).index)).toBe(0);
      expect(await redis.hlen(journal(keys).events)).toBe(0);
      // Their marks stay until the job is written: reads of these spans keep waiting for them.
      expect(await redis.zcard(keys.pendingOrganization(org))).toBe(3);
      expect(await spanBacklog(redis, keys)).toBe(3);
      expect(await recoverKeptLogs(redis, keys, producer.queue, 0)).toBe(0);
      expect(await producer.queue.count()).toBe(jobs.length);

      // Written by their worker, a log's marks and its journal entry go together.
      const written = await intake.reserve([event('written')], undefined, true);
      await clearPending(redis, keys, written, { reserved: true });
      expect(await redis.hlen(journal(keys).events)).toBe(0);
      expect(await recoverKeptLogs(redis, keys, producer.queue, 0)).toBe(0);
    } finally {
      await producer.queue.obliterate({ force: true });
      await producer.close();
    }
  });

  it('is queued by the upkeep before its lost-job check, which would otherwise take its events as lost', async () => {
    const prefix = uniquePrefix('kept-upkeep');
    const keys = redisKeys(prefix);
    const producer = createProducer('span-write', redis, prefix);
    const intake = createSpanIntake(redis, producer, keys);
    // Never run: the upkeep only listens to its failures. On the shared connection, which closing it leaves open.
    const spanWriter = new Worker('span-write', null, { connection: redis, prefix, autorun: false });
    const org = randomUUID();
    const traceId = randomUUID();
    const kept = await intake.reserve(
      [{ kind: 'create', organization_id: org, trace_id: traceId, fields: { output: 'kept' } }],
      undefined,
      true,
    );
    // Its worker died two minutes ago: past the journal's grace and past the backlog's in-flight grace, and
    // no span-write job is queued, the state in which the lost-job check forgets a backlog's old events.
    const [seconds] = await redis.time();
    const twoMinutesAgo = (Number(seconds) - 120) * 1e6;
    await redis.zadd(journal(keys).index, 'XX', twoMinutesAgo, String(kept[0]!.seq));
    await redis.zadd(keys.spanBacklog, 'XX', ...kept.flatMap((e) => [twoMinutesAgo, String(e.seq)]));
    const stop = startPendingUpkeep({ redis, keys, spanWrites: producer.queue, spanWriter, log: quiet });
    try {
      // The first check runs after 5 s.
      await expect
        .poll(() => producer.queue.getJob(`kept-${kept[0]!.seq}`), { timeout: 20_000, interval: 200 })
        .toBeTruthy();
      // The rest of that check: the lost-job check, then the release of forgotten marks.
      await sleep(500);
      expect(await spanBacklog(redis, keys)).toBe(1);
      expect(await redis.exists(keys.backlogForgotten)).toBe(0);
      expect(await redis.smembers(keys.pendingSpan(org, traceId))).toEqual([String(kept[0]!.seq)]);
    } finally {
      stop();
      await spanWriter.close();
      await producer.queue.obliterate({ force: true });
      await producer.close();
    }
  });
});
