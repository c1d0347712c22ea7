import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  createSql,
  deleteExpiredTraces,
  ensureOrganization,
  getOrCreateProject,
  migrate,
  type Sql,
} from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { databaseUrl } from '../support/services';

// "With RETENTION_DAYS, disk use stays flat": a database of its own (other tests write spans too) takes
// the same ingest again and again while each run of the retention job removes what has expired, and
// VACUUM (which autovacuum runs in service) makes the space reusable. The table's size, indexes and TOAST
// included, stops growing; the same ingest without retention keeps growing it, so the measure can see growth.

const SPANS_PER_ROUND = 3000;
let sql: Sql;
let admin: Sql;
let dbName: string;
let org: string;
let project: string;
let seq = 0;

beforeAll(async () => {
  const url = new URL(databaseUrl());
  dbName = `${url.pathname.slice(1)}_disk_${randomBytes(3).toString('hex')}`;
  url.pathname = `/${dbName}`;
  await migrate(url.toString());
  sql = createSql(url.toString(), { max: 2 });
  admin = createSql(databaseUrl(), { max: 1 });
  org = await ensureOrganization(sql, 'disk');
  project = (await getOrCreateProject(sql, org, 'disk')).uuid;
}, 60_000);
afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists "${dbName}" with (force)`);
  await admin?.end();
});

/** A round's ingest through the worker's own write path: traces of a root and two children, ~2 KB each. */
async function ingestRound() {
  const events: SpanEvent[] = [];
  for (let i = 0; i < SPANS_PER_ROUND / 3; i++) {
    const root = randomUUID();
    for (const trace_id of [root, randomUUID(), randomUUID()]) {
      const fields = {
        project_id: project,
        root_trace_id: root,
        ...(trace_id !== root && { parent_trace_id: root }),
        output: randomBytes(1000).toString('hex'),
      };
      events.push({ kind: 'create', organization_id: org, trace_id, seq: ++seq, fields });
    }
  }
  for (let i = 0; i < events.length; i += 500) await applySpanEvents(sql, events.slice(i, i + 500));
}

const count = async () => (await sql<{ rows: number }[]>`select count(*)::int as rows from spans`)[0].rows;

async function round({ retention }: { retention: boolean }): Promise<number> {
  const rowsBefore = await count();
  const [{ start }] = await sql<{ start: Date }[]>`select clock_timestamp() as start`;
  // This round's spans are stored a second after `start` or later; the cutoff falls in that second.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await ingestRound();
  if (retention) {
    // Everything stored before this round has expired: a retention of (now - start - 0.5 s).
    const [{ age }] = await sql<
      { age: number }[]
    >`select extract(epoch from clock_timestamp() - ${start}::timestamptz) as age`;
    await deleteExpiredTraces(sql, { days: (age - 0.5) / 86_400, batchSize: 5000 });
  }
  await sql.unsafe('vacuum spans');
  expect(await count()).toBe(retention ? SPANS_PER_ROUND : rowsBefore + SPANS_PER_ROUND);
  const [{ bytes }] = await sql<{ bytes: number }[]>`select pg_total_relation_size('spans')::float8 as bytes`;
  return bytes;
}

describe('disk use with retention', () => {
  it('stays flat while the same ingest keeps arriving, and grows without retention', async () => {
    const withRetention: number[] = [];
    for (let i = 0; i < 8; i++) withRetention.push(await round({ retention: true }));
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    // A round's ingest lands in the space the round before it freed: the size swings between about one
    // and two rounds' worth, and the last four rounds reach no higher than the first four.
    const plateau = Math.max(...withRetention.slice(0, 4));
    expect(Math.max(...withRetention.slice(4)), withRetention.map(mb).join(' ')).toBeLessThan(plateau * 1.1);

    const without: number[] = [];
    for (let i = 0; i < 4; i++) without.push(await round({ retention: false }));
    expect(without[3], without.map(mb).join(' ')).toBeGreaterThan(plateau * 1.8);
  }, 120_000);
});
