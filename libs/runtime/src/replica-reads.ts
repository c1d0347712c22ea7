import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { createSql, isUnreachable, WalTimeline, type Sql } from '@sightline/db';
import { redactedAddress } from './dependency-check';
import { repeat } from './repeat';
import { lagTolerantReads, replicaLagSeconds, replicaServing } from './metric-definitions';

/** Runs a read that may be a little stale; see createReplicaReads. */
export type LagTolerant = <T>(read: (sql: Sql) => Promise<T>) => Promise<T>;

type Replica = {
  label: string;
  /** The reads' pool, with the caller's statement timeout. */
  sql: Sql;
  /** One connection for the checks, so that a check never waits behind the reads. */
  check: Sql;
  serving: boolean;
};

type Options = {
  /** Which reads these are, for the metrics: an API node's console reads, a worker's monitor readings. */
  reads: 'console' | 'monitors';
  primary: Sql;
  urls: readonly string[];
  /** A replica further behind than this serves nothing until it catches up. */
  maxLagMs: number;
  /** How often each replica's lag is measured. */
  checkMs: number;
  /** Each read's statement timeout on a replica (0: none), as on the primary's pool. */
  statementTimeoutMs: number;
  log: Pick<Logger, 'info' | 'warn' | 'debug'>;
};

// A standby cancels a read whose rows its replay must remove (a conflict with recovery): retried on the primary.
const CONFLICT_WITH_RECOVERY = '40001';
// A replica that does not answer a connection within this is taken as gone, rather than holding the read.
const CONNECT_TIMEOUT_SECONDS = 2;

/**
 * Where the reads that may be a few seconds stale go (an API node's console reads, a worker's monitor
 * readings): to a replica caught up within `maxLagMs`, else to the primary. A replica that fails under
 * a read (gone, restarting, or cancelling it for a conflict with recovery) is set aside and the read runs
 * again on the primary: a replica's trouble never reaches the caller. Reads that promise read-your-writes
 * use the primary directly and never come here.
 *
 * `start` measures the replicas once (none serves before), then every `checkMs`.
 */
export function createReplicaReads({ reads, primary, urls, maxLagMs, checkMs, statementTimeoutMs, log }: Options) {
  const connection = { jit: 'off', statement_timeout: statementTimeoutMs } as const;
  const replicas: Replica[] = urls.map((url) => ({
    label: redactedAddress(url),
    sql: createSql(url, { connection, connect_timeout: CONNECT_TIMEOUT_SECONDS }),
    check: createSql(url, {
      max: 1,
      connect_timeout: CONNECT_TIMEOUT_SECONDS,
      connection: { statement_timeout: 2_000 },
    }),
    serving: false,
  }));

  // Both series from the start, so that a rate over them is defined before the first read.
  for (const servedBy of ['primary', 'replica']) lagTolerantReads.inc({ reads, served_by: servedBy }, 0);
  const onPrimary: LagTolerant = (read) => {
    lagTolerantReads.inc({ reads, served_by: 'primary' });
    return read(primary);
  };

  const setServing = (replica: Replica, serving: boolean) => {
    if (replica.serving !== serving)
      log.info({ replica: replica.label }, serving ? 'replica serving reads' : 'replica set aside');
    replica.serving = serving;
    replicaServing.set({ reads, replica: replica.label }, serving ? 1 : 0);
  };

  let turn = 0;
  const lagTolerant: LagTolerant = async (read) => {
    const fit = replicas.filter((r) => r.serving);
    if (fit.length === 0) return onPrimary(read);
    const replica = fit[turn++ % fit.length]!;
    try {
      const answer = await read(replica.sql);
      lagTolerantReads.inc({ reads, served_by: 'replica' });
      return answer;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (!isUnreachable(err) && code !== CONFLICT_WITH_RECOVERY) throw err;
      // Until the next check finds it well again.
      if (code !== CONFLICT_WITH_RECOVERY) setServing(replica, false);
      log.warn({ replica: replica.label, err: (err as Error).message }, 'replica read failed; read from the primary');
      return onPrimary(read);
    }
  };

  // Long enough that a replica stopped for a while still reads as at least this far behind.
  const timeline = new WalTimeline(Math.max(60_000, 2 * maxLagMs));
  const checkReplica = async (replica: Replica) => {
    try {
      const [state] = await replica.check<{ replayed: string | null; recovering: boolean }[]>`
        select pg_last_wal_replay_lsn()::text as replayed, pg_is_in_recovery() as recovering`;
      // Promoted (or never a replica): its data parts from the primary's, so it serves nothing.
      const lagMs = state!.recovering && state!.replayed ? timeline.lagMs(performance.now(), state!.replayed) : null;
      replicaLagSeconds.set({ reads, replica: replica.label }, lagMs === null ? -1 : lagMs / 1000);
      setServing(replica, lagMs !== null && lagMs <= maxLagMs);
    } catch (err) {
      replicaLagSeconds.set({ reads, replica: replica.label }, -1);
      setServing(replica, false);
      log.debug({ replica: replica.label, err: (err as Error).message }, 'replica check failed');
    }
  };
  const check = async () => {
    // Noted before the replicas are asked, so that a replica is never measured against WAL it could not have.
    // A primary out of reach is not noted: replicas are then measured against what it held last, and
    // serve these reads while it is away.
    try {
      const [noted] = await primary<{ flushed: string }[]>`select pg_current_wal_flush_lsn()::text as flushed`;
      timeline.note(performance.now(), noted!.flushed);
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'replica check: primary unreachable');
    }
    await Promise.all(replicas.map(checkReplica));
  };

  for (const replica of replicas) setServing(replica, false);
  let stop = () => {};
  return {
    lagTolerant: replicas.length === 0 ? onPrimary : lagTolerant,
    async start() {
      if (replicas.length === 0) return;
      await check();
      stop = repeat(check, checkMs, () => {});
    },
    async close() {
      stop();
      await Promise.all(replicas.flatMap((r) => [r.sql.end({ timeout: 5 }), r.check.end({ timeout: 1 })]));
    },
  };
}
