import cors from '@fastify/cors';
import fp from 'fastify-plugin';
import helmet from 'helmet';
import type { ApiEnv } from '@sightline/schemas';

/** `CORS_ORIGINS` as @fastify/cors takes it: `*`, a list of exact origins, or null (CORS off). */
export function corsOrigins(setting: string | undefined): '*' | string[] | null {
  const origins = (setting ?? '')
    .split(',')
    .map((o) => o.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  if (!origins.length) return null;
  return origins.includes('*') ? '*' : origins;
}

/**
 * Helmet's security headers on every response. Its default CSP already lets /docs (Swagger UI: scripts and
 * styles from 'self') and /admin/queues (Bull Board: scripts from 'self', inline styles, web fonts over
 * https) run, so no route relaxes it; only `upgrade-insecure-requests` is dropped, because Sightline is
 * often served over plain HTTP on a private network, where it would send a browser's requests for the
 * pages' own scripts to an https:// address that does not answer.
 *
 * Helmet's middleware is built once and run from one hook: @fastify/helmet builds it again for every
 * request, which cost about 50 µs of CPU per request against about 20 µs for the same headers this way.
 *
 * CORS is off unless CORS_ORIGINS names the browser origins allowed to call the API. Credentials are never
 * allowed: another origin's script may call with a key in a header, never with the console's cookie.
 */
export default fp<{ config: ApiEnv }>(
  async (app, { config }) => {
    const headers = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
    app.addHook('onRequest', (req, reply, done) => headers(req.raw, reply.raw, done as (err?: unknown) => void));
    const origin = corsOrigins(config.CORS_ORIGINS);
    if (origin) {
      await app.register(cors, {
        origin,
        methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        exposedHeaders: ['x-request-id', 'retry-after'],
        maxAge: 600,
      });
    }
  },
  { name: 'security' },
);
