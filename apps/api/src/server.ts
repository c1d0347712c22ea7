import { onShutdown } from '@sightline/runtime';
import { ApiEnv, loadEnv } from '@sightline/schemas';
import { buildApp } from './app';

const env = loadEnv(ApiEnv);
// While closing, a request that still arrives on an open keep-alive connection is served (with
// `Connection: close`) rather than refused with Fastify's own 503, whose body is not in the API's shape:
// the instance stays whole until every connection has ended.
const app = await buildApp(env, { return503OnClosing: false });
const address = await app.listen({ port: env.PORT, host: env.HOST });
app.log.info(`Sightline API listening on ${address} (docs: ${address}/docs, OpenAPI: ${address}/openapi.json)`);

// app.close() stops accepting connections, lets in-flight requests finish, then runs the plugins'
// onClose hooks in reverse order: queues, pool, Redis, SQL. A response that is still streaming after
// the grace period (a client that stopped reading) is cut so that the rest of the shutdown can run.
const GRACE_MS = 10_000;
onShutdown(
  [
    [
      'http and connections',
      async () => {
        const cut = setTimeout(() => app.server.closeAllConnections(), GRACE_MS);
        await app.close();
        clearTimeout(cut);
      },
    ],
  ],
  { log: app.log as never },
);
