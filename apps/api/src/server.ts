import { setTimeout as sleep } from 'node:timers/promises';
import { exitUnlessReachable, onShutdown, startClusterMetrics } from '@sightline/runtime';
import { ApiEnv, loadEnv } from '@sightline/schemas';
import { buildApp } from './app';
import { serveOtlpGrpc } from './otlp-grpc';

const env = loadEnv(ApiEnv);
await exitUnlessReachable(env);
// Under `npm start`'s cluster, a scrape of /metrics reports every API process: this one answers the primary's
// requests and asks it (elsewhere this does nothing). Before the app exists, so that no scrape finds it unset.
startClusterMetrics();
// While closing, a request that still arrives on an open keep-alive connection is served (with
// `Connection: close`) rather than refused with Fastify's own 503, whose body is not in the API's shape:
// the instance stays whole until every connection has ended.
const app = await buildApp(env, { return503OnClosing: false });
const address = await app.listen({ port: env.PORT, host: env.HOST });
app.log.info(`Sightline API listening on ${address} (docs: ${address}/docs, OpenAPI: ${address}/openapi.json)`);
const grpc = env.OTLP_GRPC_PORT
  ? await serveOtlpGrpc(app, env.HOST, env.OTLP_GRPC_PORT).catch((err: Error) => {
      app.log.fatal(
        `OTLP/gRPC cannot listen on ${env.HOST}:${env.OTLP_GRPC_PORT} (${err.message}): set OTLP_GRPC_PORT to a free port, or to 0 to serve none`,
      );
      process.exit(1);
    })
  : null;
if (grpc) app.log.info(`OTLP/gRPC traces on ${env.HOST}:${grpc.port}`);

// First the API stops looking ready and keeps accepting for SHUTDOWN_DELAY_MS: closing a listener resets
// every connection the kernel had queued for it (requests already sent among them), and a balancer needs
// a moment to see /readyz fail. Then app.close() stops accepting connections, lets in-flight requests
// finish, and runs the plugins' onClose hooks in reverse order: queues, pool, Redis, SQL. A response
// still streaming after the grace period (a client that stopped reading) is cut so that the rest of the
// shutdown can run.
const GRACE_MS = 10_000;
onShutdown(
  [
    [
      'stop looking ready',
      async () => {
        app.draining = true;
        await sleep(env.SHUTDOWN_DELAY_MS);
      },
    ],
    [
      'http and connections',
      async () => {
        const cut = setTimeout(() => app.server.closeAllConnections(), GRACE_MS);
        // gRPC calls are served by the app: they end first.
        await grpc?.close(GRACE_MS);
        await app.close();
        clearTimeout(cut);
      },
    ],
  ],
  { log: app.log as never },
);
