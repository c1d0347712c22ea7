import fp from 'fastify-plugin';
import { createReplicaReads, type LagTolerant } from '@sightline/runtime';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs a read that may be a few seconds stale (DATABASE_REPLICA_MAX_LAG_MS) on a replica that is caught
     * up that far, else on the primary; a replica's trouble never reaches the caller (see replica-reads.ts).
     * Reads that promise read-your-writes (a trace after its 200, the clients' listing, an experiment's
     * finish, every write's own reads) use `app.sql`, the primary, and never come here.
     */
    lagTolerant: LagTolerant;
  }
}

/** Where the console's lag-tolerant reads go. */
export default fp(
  async (app) => {
    const { config } = app;
    const reads = createReplicaReads({
      reads: 'console',
      primary: app.sql,
      urls: config.DATABASE_REPLICA_URLS,
      maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
      checkMs: config.DATABASE_REPLICA_CHECK_MS,
      statementTimeoutMs: config.STATEMENT_TIMEOUT_MS,
      log: app.log,
    });
    app.decorate('lagTolerant', reads.lagTolerant);
    app.addHook('onReady', reads.start);
    app.addHook('onClose', reads.close);
  },
  { name: 'replicas', dependencies: ['config', 'sql'] },
);
