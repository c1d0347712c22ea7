import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createSql, findTraceTextOf, getOrCreateProject, type Sql } from '@sightline/db';
import { createProducer, createSpanIntake, journal, redisKeys } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';
import { completionLogWriter } from '../../apps/worker/src/processors/span-write.processor';
import { traceSettling } from '../../apps/worker/src/processors/trace-settle.processor';
import { useSql, useStatementCount } from '../support/fixtures';
import { newOrganization, uniquePrefix, useServices } from '../support/services';

const { redis } = useServices();
const { sql } = useSql();
const countStatements = useStatementCount();

/** A completion log writer on `sql`, with its span intake, on a queue prefix of its own. */
function logWriterOn(sql: Sql, label: string) {
  const prefix = uniquePrefix(label);
  const keys = redisKeys(prefix);
  const producers = {
    spanWrites: createProducer('span-write', redis, prefix),
    evals: createProducer('eval', redis, prefix),
    settles: createProducer('trace-settle', redis, prefix),
  };
  const spans = createSpanIntake(redis, producers.spanWrites, keys);
  const writeLog = completionLogWriter({
    sql,
    redis,
    keys,
    homeKeys: keys,
    batchSize: 100,
    evals: producers.evals,
    settling: traceSettling({ sql, settles: producers.settles }),
    spans,
    log: pino({ level: 'silent' }),
  });
  const close = async () => {
    await producers.spanWrites.queue.obliterate({ force: true });
    await Promise.all(Object.values(producers).map((p) => p.close()));
  };
  return { keys, producers, spans, writeLog, close };
}

describe("completions' logs", () => {
  it('answered a moment apart are written in one transaction, each once', async () => {
    // A log waits a few milliseconds for others: written at once, it took the worker and PostgreSQL from the
    // caller's next request (issue 39).
    const org = (await newOrganization(sql)).id;
    const project = (await getOrCreateProject(sql, org, 'p')).uuid;
    const traces = [randomUUID(), randomUUID()];
    const transactions = await countStatements(/^begin/i, async (watched) => {
      const { spans, writeLog, keys, close } = logWriterOn(watched, 'log-linger');
      try {
        const logs = await Promise.all(
          traces.map((trace_id) =>
            spans.reserve(
              [{ kind: 'create', organization_id: org, trace_id, fields: { project_id: project, output: 'answered' } }],
              undefined,
              true,
            ),
          ),
        );
        // The second a turn of the event loop after the first: past it, a write that does not wait has begun.
        const writes = [writeLog(logs[0])];
        await new Promise((resolve) => setImmediate(resolve));
        writes.push(writeLog(logs[1]));
        await Promise.all(writes);
        expect(await redis.zcard(journal(keys).index)).toBe(0);
      } finally {
        await close();
      }
    });
    expect(transactions).toBe(1);
    for (const trace of traces) expect((await findTraceTextOf(sql, org, trace))?.members).toHaveLength(1);
  });
});

describe("a completion's log, when PostgreSQL cannot take it", () => {
  it('is queued as a span-write job, its marks kept and its reservation confirmed', async () => {
    // Nothing listens there: every write is refused at once, as while PostgreSQL is down.
    const down = createSql('postgres://postgres@127.0.0.1:1/sightline', { max: 1, connect_timeout: 2 });
    const { keys, producers, spans, writeLog, close } = logWriterOn(down, 'log-writer');
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
      await close();
    }
  });
});
