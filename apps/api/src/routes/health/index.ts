import type { FastifyInstance } from 'fastify';

async function dependencies(app: FastifyInstance) {
  const [postgres, redis] = await Promise.all([
    app.sql`select 1`.then(() => 'ok', () => 'unavailable'),
    app.redis.ping().then(() => 'ok', () => 'unavailable'),
  ]);
  return { postgres, redis };
}

/** Unauthenticated probes for orchestrators. */
export default async function healthRoutes(app: FastifyInstance) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const deps = await dependencies(app);
    const ready = deps.postgres === 'ok' && deps.redis === 'ok';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', ...deps });
  });
}

/** `GET /api/svc/v1/`: the authenticated health check of api.md; every value is a string. */
healthRoutes.v1 = async function v1HealthRoute(app: FastifyInstance) {
  app.get('/', { schema: { summary: 'Health check', tags: ['health'] } }, async () => {
    const deps = await dependencies(app);
    return { status: deps.postgres === 'ok' && deps.redis === 'ok' ? 'ok' : 'degraded', version: '0.1.0', ...deps };
  });
};
