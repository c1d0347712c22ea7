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
    const sql = createSql(app.config.DATABASE_URL, { connection: { jit: 'off' } });
    app.decorate('sql', sql);
    app.addHook('onClose', async () => void (await sql.end({ timeout: 5 })));
  },
  { name: 'sql', dependencies: ['config'] },
);
