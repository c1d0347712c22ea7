import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { connectSubscriber } from '@sightline/runtime';
import { traceRowsOf } from '@sightline/db';
import type { LiveRoot } from '@sightline/queues';
import { LiveTracesQuery } from '@sightline/schemas';

// Roots heard within this window go out together, read in one query.
const BATCH_MS = 100;

/**
 * `GET /traces/live?project_uuid=`: the project's new root traces as Server-Sent Events, each a table row,
 * as the workers commit them. One Redis subscriber per API node serves every browser; an organization's
 * channel is subscribed while one of its browsers listens.
 */
export default async function liveTraceRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const { listen, streams } = liveRootsHub(app);

  app.get(
    '/traces/live',
    {
      sse: { kind: 'manual' },
      schema: {
        querystring: LiveTracesQuery,
        summary: "A project's new root traces as Server-Sent Events (each a TraceRow)",
        tags: ['console'],
      },
    },
    async (req, reply) => {
      const org = req.organizationId;
      const project = req.query.project_uuid;
      let pending: string[] = [];
      let timer: NodeJS.Timeout | undefined;
      let writes: Promise<unknown> = Promise.resolve();
      const flush = () => {
        const ids = pending;
        pending = [];
        timer = undefined;
        writes = writes
          .then(async () => {
            const rows = JSON.parse(await traceRowsOf(app.sql, org, ids)) as unknown[];
            for (const row of rows) await reply.sse.send({ event: 'trace', data: row });
          })
          .catch((err) => req.log.warn({ err: (err as Error).message }, 'live traces: rows not sent'));
      };
      const stopListening = await listen(app.keys.liveRoots(org), (roots) => {
        const mine = roots.filter((r) => r.project_id === project).map((r) => r.trace_id);
        if (!mine.length) return;
        pending.push(...mine);
        timer ??= setTimeout(flush, BATCH_MS);
      });
      // Ends with a reason when the stream is cut by the server rather than by the browser.
      let end!: (reason?: string) => void;
      const closed = new Promise<string | undefined>((resolve) => (end = resolve));
      reply.sse.onClose(() => end());
      streams.add(end);
      // The key or session was checked once, when the stream opened: a revoked one must not keep the tail.
      const unwatch = app.watchCredential(req, end);
      // The browser learns the stream is open (and that nothing it sends is lost from here on).
      await reply.sse.send({ event: 'ready', data: { project_uuid: project } });
      const reason = await closed;
      streams.delete(end);
      unwatch();
      clearTimeout(timer);
      stopListening();
      if (reason && reply.sse.isConnected) {
        // Rows already being sent go first; the browser then shows why the stream ended.
        await writes;
        await reply.sse.send({ event: 'error', data: { detail: reason } }).catch(() => {});
      }
      reply.sse.close();
    },
  );
}

/** One Redis subscriber for the node; a channel is subscribed while someone listens to it. */
function liveRootsHub(app: FastifyInstance) {
  const subscriber = connectSubscriber(app.redis, app.keys.seq, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
  });
  subscriber.on('error', (err) => app.log.debug({ err }, 'live subscriber error'));
  const listeners = new Map<string, Set<(roots: LiveRoot[]) => void>>();
  subscriber.on('message', (channel: string, message: string) => {
    const roots = liveRootsOf(message);
    // A message that cannot be read is dropped: thrown here, it would take down the subscriber and every
    // stream of the node with it.
    if (!roots) return void app.log.warn({ channel, message: message.slice(0, 200) }, 'live traces: bad message');
    for (const listener of listeners.get(channel) ?? []) listener(roots);
  });
  const streams = new Set<() => void>();
  // Open streams would hold the shutdown until its grace period ends: they are closed first.
  app.addHook('preClose', async () => streams.forEach((end) => end()));
  app.addHook('onClose', async () => void subscriber.disconnect());

  async function listen(channel: string, listener: (roots: LiveRoot[]) => void) {
    const set = listeners.get(channel) ?? new Set();
    listeners.set(channel, set);
    set.add(listener);
    if (set.size === 1) await subscriber.subscribe(channel);
    return () => {
      set.delete(listener);
      if (set.size) return;
      listeners.delete(channel);
      subscriber.unsubscribe(channel).catch(() => {});
    };
  }
  return { listen, streams };
}

function liveRootsOf(message: string): LiveRoot[] | null {
  try {
    const roots: unknown = JSON.parse(message);
    const valid =
      Array.isArray(roots) &&
      roots.every((r: Partial<LiveRoot> | null) => typeof r?.project_id === 'string' && typeof r.trace_id === 'string');
    return valid ? (roots as LiveRoot[]) : null;
  } catch {
    return null;
  }
}
