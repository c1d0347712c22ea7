import { performance } from 'node:perf_hooks';
import fp from 'fastify-plugin';
import { createSql, isUnreachable, WalTimeline, type Sql } from '@sightline/db';
import { lagTolerantReads, redactedAddress, repeat, replicaLagSeconds, replicaServing } from '@sightline/runtime';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs a read that may be a few seconds stale (DATABASE_REPLICA_MAX_LAG_MS) on a replica that is caught
     * up that far, else on the primary. A replica that fails under it (gone, restarting, or cancelling the
     * read for a conflict with recovery) is set aside and the read runs again on the primary: a replica's
     * trouble never reaches the caller.
     */
    lagTolerant<T>(read: (sql: Sql) => Promise<T>): Promise<T>;
  }
}

type Replica = {
  label: string;
  /** The reads' pool, with the API's statement timeout. */
  sql: Sql;
  /** One connection for the checks, so that a check never waits behind the reads. */
  check: Sql;
  serving: boolean;
};

// A standby cancels a read whose rows its replay must remove (a conflict with recovery): retried on the primary.
const CONFLICT_WITH_RECOVERY = '40001';
// A replica that does not answer a connection within this is taken as gone, rather than holding the read.
const CONNECT_TIMEOUT_SECONDS = 2;

/**
 * Where the console's lag-tolerant reads go. Reads that promise read-your-writes (a trace after its 200,
 * the clients' listing, an experiment's finish, every write's own reads) use `app.sql`, the primary, and
 * never come here.
 */
export default fp(
  async (app) => {
    const { config } = app;
    const primary = app.sql;
    const connection = { jit: 'off', statement_timeout: config.STATEMENT_TIMEOUT_MS } as const;
    const replicas: Replica[] = config.DATABASE_REPLICA_URLS.map((url) => ({
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
    for (const servedBy of ['primary', 'replica']) lagTolerantReads.inc({ served_by: servedBy }, 0);
    const onPrimary = <T>(read: (sql: Sql) => Promise<T>) => {
      lagTolerantReads.inc({ served_by: 'primary' });
      return read(primary);
    };
    if (replicas.length === 0) return void app.decorate('lagTolerant', onPrimary);

    let turn = 0;
    app.decorate('lagTolerant', async <T>(read: (sql: Sql) => Promise<T>): Promise<T> => {
      const fit = replicas.filter((r) => r.serving);
      if (fit.length === 0) return onPrimary(read);
      const replica = fit[turn++ % fit.length]!;
      try {
        const answer = await read(replica.sql);
        lagTolerantReads.inc({ served_by: 'replica' });
        return answer;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (!isUnreachable(err) && code !== CONFLICT_WITH_RECOVERY) throw err;
        // Until the next check finds it well again.
        if (code !== CONFLICT_WITH_RECOVERY) setServing(replica, false);
        app.log.warn(
          { replica: replica.label, err: (err as Error).message },
          'replica read failed; read from the primary',
        );
        return onPrimary(read);
      }
    });

    const setServing = (replica: Replica, serving: boolean) => {
      if (replica.serving !== serving)
        app.log.info({ replica: replica.label }, serving ? 'replica serving reads' : 'replica set aside');
      replica.serving = serving;
      replicaServing.set({ replica: replica.label }, serving ? 1 : 0);
    };

    // Long enough that a replica stopped for a while still reads as at least this far behind.
    const timeline = new WalTimeline(Math.max(60_000, 2 * config.DATABASE_REPLICA_MAX_LAG_MS));
    const checkReplica = async (replica: Replica) => {
      try {
        const [state] = await replica.check<{ replayed: string | null; recovering: boolean }[]>`
          select pg_last_wal_replay_lsn()::text as replayed, pg_is_in_recovery() as recovering`;
        // Promoted (or never a replica): its data parts from the primary's, so it serves nothing.
        const lagMs = state!.recovering && state!.replayed ? timeline.lagMs(performance.now(), state!.replayed) : null;
        replicaLagSeconds.set({ replica: replica.label }, lagMs === null ? -1 : lagMs / 1000);
        setServing(replica, lagMs !== null && lagMs <= config.DATABASE_REPLICA_MAX_LAG_MS);
      } catch (err) {
        replicaLagSeconds.set({ replica: replica.label }, -1);
        setServing(replica, false);
        app.log.debug({ replica: replica.label, err: (err as Error).message }, 'replica check failed');
      }
    };
    const check = async () => {
      // Noted before the replicas are asked, so that a replica is never measured against WAL it could not have.
      // A primary out of reach is not noted: replicas are then measured against what it held last, and
      // serve the console while it is away.
      try {
        const [noted] = await primary<{ flushed: string }[]>`select pg_current_wal_flush_lsn()::text as flushed`;
        timeline.note(performance.now(), noted!.flushed);
      } catch (err) {
        app.log.debug({ err: (err as Error).message }, 'replica check: primary unreachable');
      }
      await Promise.all(replicas.map(checkReplica));
    };

    for (const replica of replicas) setServing(replica, false);
    const stop = repeat(check, config.DATABASE_REPLICA_CHECK_MS, () => {});
    app.addHook('onReady', check);
    app.addHook('onClose', async () => {
      stop();
      await Promise.all(replicas.flatMap((r) => [r.sql.end({ timeout: 5 }), r.check.end({ timeout: 1 })]));
    });
  },
  { name: 'replicas', dependencies: ['config', 'sql'] },
);
