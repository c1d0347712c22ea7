import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { ZodType } from 'zod';
import type { Reply } from '@sightline/queues';
import { AppError } from '../errors';

type WaitOptions<T> = { timeoutMs: number; timeoutMessage: string; onChunk?: (chunk: string) => void; signal?: AbortSignal; schema?: ZodType<T> };

declare module 'fastify' {
  interface FastifyInstance {
    /** Subscribes to a job's reply channel, enqueues the job, and resolves with its `done` reply. */
    awaitReply<T>(replyTo: string, enqueue: () => Promise<unknown>, options: WaitOptions<T>): Promise<T>;
  }
}

/** Each API node holds one Redis subscriber connection, shared by every request that waits on a job. */
export default fp(async (app) => {
  const subscriber = new Redis(app.config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  subscriber.on('error', (err) => app.log.debug({ err }, 'redis subscriber error'));
  const listeners = new Map<string, (reply: Reply<unknown>) => void>();
  subscriber.on('message', (channel: string, message: string) => listeners.get(channel)?.(JSON.parse(message) as Reply<unknown>));

  app.decorate('awaitReply', async <T>(replyTo: string, enqueue: () => Promise<unknown>, { timeoutMs, timeoutMessage, onChunk, signal, schema }: WaitOptions<T>) => {
    const channel = app.keys.replies(replyTo);
    let settle!: (r: { value: T } | Error) => void;
    const outcome = new Promise<{ value: T } | Error>((resolve) => (settle = resolve));
    listeners.set(channel, (reply) => {
      if ('chunk' in reply) onChunk?.(reply.chunk);
      else if ('error' in reply) settle(new AppError(reply.status ?? 500, reply.error));
      else settle({ value: schema ? schema.parse(reply.done) : (reply.done as T) });
    });
    const timer = setTimeout(() => settle(new AppError(504, timeoutMessage)), timeoutMs);
    const abort = () => settle(new AppError(499, 'client closed the request'));
    signal?.addEventListener('abort', abort);
    try {
      await subscriber.subscribe(channel);
      await enqueue();
      const result = await outcome;
      if (result instanceof Error) throw result;
      return result.value;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      listeners.delete(channel);
      subscriber.unsubscribe(channel).catch(() => {});
    }
  });

  app.addHook('onClose', async () => subscriber.disconnect());
});
