import { onShutdown } from '@sightline/runtime';
import { ApiEnv, loadEnv } from '@sightline/schemas';
import { buildApp } from './app';

const env = loadEnv(ApiEnv);
const app = await buildApp(env);
const address = await app.listen({ port: env.PORT, host: env.HOST });
app.log.info(`Sightline API listening on ${address} (docs: ${address}/docs, OpenAPI: ${address}/openapi.json)`);

// app.close() stops accepting connections, lets in-flight requests finish, then runs the plugins'
// onClose hooks in reverse order: queues, pool, Redis, SQL.
onShutdown([['http and connections', () => app.close()]], { log: app.log as never });
