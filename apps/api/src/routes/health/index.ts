import type { FastifyInstance } from 'fastify';
import { errorResponses, HealthSchema } from '@sightline/schemas';
import { VERSION } from '../../version';

// A probe answers within its caller's timeout: while PostgreSQL is down its client waits out a
// reconnection backoff (up to 20 s) before a query fails.
const CHECK_TIMEOUT_MS = 1000;
function check(probe: Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'unavailable'>(
    (resolve) => (timer = setTimeout(resolve, CHECK_TIMEOUT_MS, 'unavailable')),
  );
  return Promise.race([
    probe.then(
      () => 'ok' as const,
      () => 'unavailable' as const,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

async function dependencies(app: FastifyInstance) {
  const [postgres, redis] = await Promise.all([check(app.sql`select 1`.execute()), check(app.redis.ping())]);
  return { postgres, redis };
}

/** Unauthenticated probes for orchestrators. */
export default async function healthRoutes(app: FastifyInstance) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    if (app.draining) return reply.code(503).send({ status: 'shutting down' });
    const deps = await dependencies(app);
    const ready = deps.postgres === 'ok' && deps.redis === 'ok';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', ...deps });
  });
}

/** `GET /api/svc/v1/`: the authenticated health check of api.md; every value is a string. */
healthRoutes.v1 = async function v1HealthRoute(app: FastifyInstance) {
  app.get(
    '/',
    { schema: { response: { 200: HealthSchema, ...errorResponses }, summary: 'Health check', tags: ['health'] } },
    async () => {
      const deps = await dependencies(app);
      return { status: deps.postgres === 'ok' && deps.redis === 'ok' ? 'ok' : 'degraded', version: VERSION, ...deps };
    },
  );
};
