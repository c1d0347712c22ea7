import fp from 'fastify-plugin';
import { createSql, type Sql } from '@sightline/db';

declare module 'fastify' {
  interface FastifyInstance {
    sql: Sql;
  }
}

/** The PostgreSQL pool; closed last of the connections (plugins close in reverse order of registration). */
export default fp(
  async (app) => {
    // No JIT for the API's queries: compiling costs 0.1-1 s, more than any listing query should take, and the
    // planner turns it on by estimated cost (a filter evaluated on every root of a large project).
    // A statement timeout, so that a read no index serves (a broad search over a large project) answers
    // 503 (see errors.ts) instead of holding a connection and a core for as long as it takes.
    const sql = createSql(app.config.DATABASE_URL, {
      connection: { jit: 'off', statement_timeout: app.config.STATEMENT_TIMEOUT_MS },
    });
    app.decorate('sql', sql);
    app.addHook('onClose', async () => void (await sql.end({ timeout: 5 })));
  },
  { name: 'sql', dependencies: ['config'] },
);
