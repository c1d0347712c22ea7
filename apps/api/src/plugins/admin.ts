import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const ADMIN_BASE_PATH = '/admin/queues';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The admin key a request presents: `x-admin-key`, or the password of HTTP Basic auth (any user name). */
function presentedKey(req: FastifyRequest): string | undefined {
  const header = req.headers['x-admin-key'];
  if (typeof header === 'string') return header;
  const [scheme, encoded] = (req.headers.authorization ?? '').split(' ');
  if (scheme?.toLowerCase() !== 'basic' || !encoded) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/**
 * A browser holding the Basic credentials would send them with a form posted by another site too: the
 * dashboard's changes (retry, clean, empty, ...) are taken only from its own pages.
 */
function isCrossSite(req: FastifyRequest): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return false;
  const site = req.headers['sec-fetch-site'];
  if (site) return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (!origin) return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

/**
 * Bull Board at /admin/queues, showing every queue of the registry, for holders of ADMIN_API_KEY; without
 * that key the routes do not exist (404). The admin key is its own secret: organizations' API keys are
 * checked only under /api/svc/v1 and open nothing here.
 *
 * It is read-only unless ADMIN_QUEUE_ACTIONS is set: a click on "empty" or "clean" would drop span writes
 * that clients were told are kept, and "retry" on a failed completion would call the provider again.
 */
export default async function admin(app: FastifyInstance) {
  const key = app.config.ADMIN_API_KEY;
  if (!key) return;
  const expected = digest(key);

  // Bull Board's routes answer errors with its own handler, so refusals are sent here rather than thrown.
  app.addHook('onRequest', async (req, reply) => {
    const given = presentedKey(req);
    // Digests have equal lengths, so the comparison takes the same time whatever was sent.
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return reply.code(401).header('www-authenticate', 'Basic realm="Sightline admin", charset="UTF-8"').send({
        detail: 'admin key required: send it as the password of HTTP Basic auth or in the x-admin-key header',
      });
    }
    if (isCrossSite(req)) return reply.code(403).send({ detail: 'cross-site request refused' });
  });

  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(ADMIN_BASE_PATH);
  createBullBoard({
    // A shard's span-write queue is named after its prefix: the board tells queues apart by name.
    queues: app.allQueues.map(
      (queue) =>
        new BullMQAdapter(queue, {
          readOnlyMode: !app.config.ADMIN_QUEUE_ACTIONS,
          prefix: queue.opts.prefix === app.keyPrefix ? '' : `${queue.opts.prefix}:`,
        }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Sightline queues' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: ADMIN_BASE_PATH });
}
