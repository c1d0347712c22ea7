import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  createSql,
  deleteExpiredTraces,
  ensureOrganization,
  ensureSpanPartitions,
  getOrCreateProject,
  migrate,
  type Sql,
} from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { databaseUrl } from '../support/services';

// "With RETENTION_DAYS, disk use stays flat": a database of its own (other tests write spans too) takes
// the same ingest day after day while each run of the retention job drops the days that have expired. A
// dropped partition gives its space back at once, without VACUUM. The days are made by storing each round's
// traces as first stored on its day (their keys made first), so the round's spans, written through the
// worker's own write path, land in that day's partition, as a trace's late spans do.

const SPANS_PER_ROUND = 3000;
const DAY = 86_400_000;
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

/** A round's ingest through the worker's own write path: traces of a root and two children, ~2 KB each, first stored on `day`. */
async function ingestRound(day: Date) {
  await ensureSpanPartitions(sql, { from: day, to: day });
  const events: SpanEvent[] = [];
  const roots: string[] = [];
  for (let i = 0; i < SPANS_PER_ROUND / 3; i++) {
    const root = randomUUID();
    roots.push(root);
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
  await sql`insert into span_parts select ${org}::uuid, unnest(${sql.array(roots)}::uuid[]), ${day}::timestamptz`;
  for (let i = 0; i < events.length; i += 500) await applySpanEvents(sql, events.slice(i, i + 500));
}

const count = async () => (await sql<{ rows: number }[]>`select count(*)::int as rows from spans`)[0].rows;

/** The bytes of every partition of spans (indexes and TOAST included) and of the key table. */
const spanBytes = async () =>
  (
    await sql<{ bytes: number }[]>`
      select (coalesce(sum(pg_total_relation_size(inhrelid)), 0) + pg_total_relation_size('span_parts'))::float8 as bytes
      from pg_inherits where inhparent = 'spans'::regclass`
  )[0].bytes;

let day = 0;
async function round({ retention }: { retention: boolean }): Promise<number> {
  const rowsBefore = await count();
  // Day by day, from 30 days ago, each round at the start of its UTC day (its partition's lower bound).
  const today = Math.floor(Date.now() / DAY) * DAY;
  const written = today - (30 - day++) * DAY;
  await ingestRound(new Date(written));
  // Kept: the day just written; its day before has expired. The cutoff falls at noon of the written day,
  // whatever the time of day now: a retention of a whole number of days would move it across a partition's
  // bound at midnight, and one of N.5 days at noon.
  if (retention) await deleteExpiredTraces(sql, { days: (Date.now() - (written + DAY / 2)) / DAY, batchSize: 5000 });
  // The key table loses its expired rows one by one: VACUUM (which autovacuum runs in service) makes their
  // space reusable. The spans' own space came back with the dropped partition.
  await sql.unsafe('vacuum span_parts');
  expect(await count()).toBe(retention ? SPANS_PER_ROUND : rowsBefore + SPANS_PER_ROUND);
  return spanBytes();
}

describe('disk use with retention', () => {
  it('stays flat while the same ingest keeps arriving, and grows without retention', async () => {
    const withRetention: number[] = [];
    for (let i = 0; i < 8; i++) withRetention.push(await round({ retention: true }));
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    // Each round's day is all that is left after it: the size is about one round's worth every time.
    const plateau = Math.max(...withRetention.slice(0, 4));
    expect(Math.max(...withRetention.slice(4)), withRetention.map(mb).join(' ')).toBeLessThan(plateau * 1.1);

    const without: number[] = [];
    for (let i = 0; i < 4; i++) without.push(await round({ retention: false }));
    expect(without[3], without.map(mb).join(' ')).toBeGreaterThan(plateau * 1.8);
  }, 180_000);
});
