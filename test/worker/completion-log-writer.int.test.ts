import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createSql } from '@sightline/db';
import { createProducer, createSpanIntake, journal, redisKeys } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { completionLogWriter } from '../../apps/worker/src/processors/span-write.processor';
import { traceSettling } from '../../apps/worker/src/processors/trace-settle.processor';
import { uniquePrefix, useServices } from '../support/services';

const { redis } = useServices();

describe("a completion's log, when PostgreSQL cannot take it", () => {
  it('is queued as a span-write job, its marks kept and its reservation confirmed', async () => {
    const prefix = uniquePrefix('log-writer');
    const keys = redisKeys(prefix);
    const producers = {
      spanWrites: createProducer('span-write', redis, prefix),
      evals: createProducer('eval', redis, prefix),
      settles: createProducer('trace-settle', redis, prefix),
    };
    const spans = createSpanIntake(redis, producers.spanWrites, keys);
    // Nothing listens there: every write is refused at once, as while PostgreSQL is down.
    const down = createSql('postgres://postgres@127.0.0.1:1/sightline', { max: 1, connect_timeout: 2 });
    const writeLog = completionLogWriter({
      sql: down,
      redis,
      keys,
      homeKeys: keys,
      batchSize: 100,
      evals: producers.evals,
      settling: traceSettling({ sql: down, settles: producers.settles }),
      spans,
      log: pino({ level: 'silent' }),
    });
    try {
      const org = randomUUID();
      const log = await spans.reserve(
        [{ kind: 'create', organization_id: org, trace_id: randomUUID(), fields: { output: 'answered' } }],
        undefined,
        true,
      );
      await writeLog(log);
      const jobs = await producers.spanWrites.queue.getJobs(['waiting']);
      expect(jobs.flatMap((j) => (j.data as { events: SpanEvent[] }).events)).toEqual(log);
      await expect.poll(() => redis.zcard(journal(keys).index)).toBe(0);
      expect(await redis.hlen(journal(keys).events)).toBe(0);
      expect(await redis.zcard(keys.pendingOrganization(org))).toBe(1);
    } finally {
      await down.end();
      await producers.spanWrites.queue.obliterate({ force: true });
      await Promise.all(Object.values(producers).map((p) => p.close()));
    }
  });
});
