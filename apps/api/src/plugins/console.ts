import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build:web` writes the console. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../web/dist', import.meta.url));

// Paths the API and the operators' tools own: a request under them never gets the console, so an unknown
// API path keeps answering the API's own 404 `{detail}`.
const RESERVED = ['/api', '/docs', '/metrics', '/healthz', '/readyz', '/admin', '/openapi.json'];
const isReserved = (path: string) => RESERVED.some((p) => path === p || path.startsWith(`${p}/`));

// A page load fetches a dozen files: logging each request and its answer at info buried the API's requests.
// Page loads themselves (index.html) are still logged, as are a file's failures (5xx at error).
const FILE_LOG_LEVEL = 'warn';

// Vite names every file under assets/ after a hash of its content, so a browser may keep them for good;
// index.html names the current ones and must be asked for again each time.
const NOT_BUILT =
  'The Sightline console is not built. Run `npm run build:web` (or `npm start`, which builds it), then reload this page.\n';

/**
 * Serves the built web console (apps/web/dist) at `/`: hashed assets with long caching, and index.html for
 * any other GET that asks for HTML, so that the console's own routes (/projects/..., /settings) load on a
 * reload or from a shared link. Without a build, those pages answer 503 saying how to build it.
 *
 * Not wrapped in fastify-plugin: @fastify/static's `sendFile` decorator stays in this scope, away from
 * the ones Swagger UI and Bull Board register in theirs.
 */
export default async function consolePlugin(app: FastifyInstance, options: { dir?: string }) {
  const dir = options.dir ?? CONSOLE_DIST;
  const assets = join(dir, 'assets');
  // The assets are found when the API starts: `npm start` builds the console before starting the API.
  if (existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      logLevel: FILE_LOG_LEVEL,
      // public, max-age=31536000, immutable
      maxAge: 31_536_000_000,
      immutable: true,
    });
  }

  // Read on every request (a few hundred bytes): a rebuild while the API runs is picked up.
  const sendIndex = async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    // `/` is the console's whatever a client accepts (curl included); deeper paths only for browsers.
    if (path !== '/' && (isReserved(path) || !acceptsHtml(req))) return reply.callNotFound();
    const html = await readFile(join(dir, 'index.html'), 'utf8').catch(() => null);
    if (html === null)
      return reply.code(503).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(NOT_BUILT);
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
  };
  app.get('/', { schema: { hide: true } }, sendIndex);
  // More specific routes (the API, /docs, /healthz, ...) win over this wildcard in Fastify's router.
  app.get('/*', { schema: { hide: true } }, sendIndex);

  // Files Vite copies from apps/web/public to the top of dist (the icon): not hashed, so revalidated.
  app.get('/favicon.svg', { schema: { hide: true }, logLevel: FILE_LOG_LEVEL }, async (_req, reply) => {
    const icon = await readFile(join(dir, 'favicon.svg')).catch(() => null);
    if (!icon) return reply.callNotFound();
    return reply.header('cache-control', 'no-cache').type('image/svg+xml').send(icon);
  });
}

function acceptsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html') || accept.includes('application/xhtml+xml');
}
