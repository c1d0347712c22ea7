import { transaction, type Sql } from './client';

// Spans are partitioned by day (UTC) on `part_at`, the time their trace was first stored (migration 00017).
const DAY_MS = 86_400_000;
const PARTITION_NAME = /^spans_(\d{4})(\d{2})(\d{2})$/;
const PARTITIONS_LOCK = 727_002;
/** Days made ahead of today, so that a worker's writes never wait for one to be made. */
const PARTITION_DAYS_AHEAD = 7;

const dayOf = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
/** The name of the daily partition that holds spans whose trace was first stored at `at`. */
export const spanPartitionOf = (at: Date) => `spans_${at.toISOString().slice(0, 10).replaceAll('-', '')}`;

export type SpanPartition = { name: string; from: Date; to: Date };

/** The daily partitions of spans, oldest first (not the one of spans stored before partitioning). */
export async function spanPartitions(sql: Sql): Promise<SpanPartition[]> {
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'spans'::regclass`;
  return rows
    .map((r) => PARTITION_NAME.exec(r.name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([name, y, m, d]) => {
      const from = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
      return { name, from, to: new Date(from.getTime() + DAY_MS) };
    })
    .sort((a, b) => a.from.getTime() - b.from.getTime());
}

/**
 * Makes the daily partitions from `from`'s day through `to`'s (by default today and the days ahead) that
 * are missing. Each is made as a table of its own and then attached: attaching locks the parent only
 * against other schema changes, where CREATE TABLE ... PARTITION OF would stop every read and write of
 * spans while it waits for its lock. Safe when several processes run it at once.
 */
export async function ensureSpanPartitions(
  sql: Sql,
  { from = new Date(), to = new Date(Date.now() + PARTITION_DAYS_AHEAD * DAY_MS) }: { from?: Date; to?: Date } = {},
): Promise<string[]> {
  const wanted: Date[] = [];
  for (let day = dayOf(from); day <= to; day = new Date(day.getTime() + DAY_MS)) wanted.push(day);
  const existing = new Set((await spanPartitions(sql)).map((p) => p.name));
  const missing = wanted.filter((day) => !existing.has(spanPartitionOf(day)));
  if (!missing.length) return [];
  return transaction(sql, async (tx) => {
    await tx`select pg_advisory_xact_lock(${PARTITIONS_LOCK})`;
    await tx`set local lock_timeout = '10s'`;
    const attached = new Set((await spanPartitions(tx)).map((p) => p.name));
    const made: string[] = [];
    for (const day of missing) {
      const name = spanPartitionOf(day);
      if (attached.has(name)) continue;
      const to = new Date(day.getTime() + DAY_MS);
      await tx.unsafe(
        `create table if not exists ${name} (like spans including defaults including generated including compression including storage)`,
      );
      // Each of the parent's indexes under its own name and the day's (attaching would build them under names
      // made of their columns): a plan then names the index it uses. The primary key is made by attaching.
      for (const { index, def } of await parentIndexes(tx)) {
        await tx.unsafe(
          def
            .replace(
              `INDEX ${index} ON ONLY public.spans `,
              `INDEX IF NOT EXISTS ${index}_${name.slice(6)} ON public.${name} `,
            )
            .replace(`INDEX ${index} ON ONLY spans `, `INDEX IF NOT EXISTS ${index}_${name.slice(6)} ON ${name} `),
        );
      }
      await tx.unsafe(
        `alter table spans attach partition ${name} for values from ('${day.toISOString()}') to ('${to.toISOString()}')`,
      );
      made.push(name);
    }
    return made;
  });
}

/** The parent's indexes but its primary key, with their definitions. */
const parentIndexes = (sql: Sql) => sql<{ index: string; def: string }[]>`
  select c.relname as index, pg_get_indexdef(i.indexrelid) as def
  from pg_index i join pg_class c on c.oid = i.indexrelid
  where i.indrelid = 'spans'::regclass and not i.indisprimary`;

/**
 * Drops a partition detached from spans, with the rows that triggers copied from it into span_scores and
 * trace_roots. Detached first, so that no write can copy a row of it again before it is gone.
 */
async function dropDetached(sql: Sql, name: string): Promise<void> {
  await sql.unsafe(`
    delete from span_scores s using ${name} p
    where s.organization_id = p.organization_id and s.trace_id = p.trace_id
      and jsonb_typeof(p.scores) = 'array' and p.scores <> '[]'`);
  await sql.unsafe(`
    delete from trace_roots r using ${name} p
    where r.organization_id = p.organization_id and r.trace_id = p.trace_id and p.depth = 0 and p.created`);
  await sql.unsafe(`drop table ${name}`);
}

/**
 * Drops the daily partitions whose every trace was first stored before `cutoff`, oldest first, until
 * `shouldStop` answers true. Each partition's keys (`span_parts`) go first, so that a span arriving late for
 * one of its traces starts anew instead of naming a partition that is gone; then the partition is detached
 * CONCURRENTLY (reads and writes of spans go on) and dropped with its copies (dropDetached). A detach that
 * was interrupted is finished first.
 */
export async function dropExpiredPartitions(
  sql: Sql,
  { cutoff, batchSize, shouldStop = () => false }: { cutoff: Date; batchSize: number; shouldStop?: () => boolean },
): Promise<string[]> {
  const pending = await sql<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'spans'::regclass and i.inhdetachpending`;
  for (const { name } of pending) {
    await sql.unsafe(`alter table spans detach partition ${name} finalize`);
    await dropDetached(sql, name);
  }
  const dropped = pending.map((p) => p.name);
  for (const partition of await spanPartitions(sql)) {
    if (partition.to > cutoff || shouldStop()) break;
    for (;;) {
      const { count } = await sql`
        delete from span_parts where ctid = any(array(
          select ctid from span_parts where part_at >= ${partition.from} and part_at < ${partition.to} limit ${batchSize}))`;
      if (count < batchSize) break;
      if (shouldStop()) return dropped;
    }
    await sql.unsafe(`alter table spans detach partition ${partition.name} concurrently`);
    await dropDetached(sql, partition.name);
    dropped.push(partition.name);
  }
  return dropped;
}
