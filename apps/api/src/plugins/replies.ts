import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { connectSubscriber } from '@sightline/runtime';
import { createReplyWaiter, ReplyError, type WaitOptions } from '@sightline/queues';
import { AppError } from '../errors';

declare module 'fastify' {
  interface FastifyInstance {
    /** Subscribes to a job's reply channel, enqueues the job, and resolves with its `done` reply. */
    awaitReply<T>(replyTo: string, enqueue: () => Promise<unknown>, options: WaitOptions<T>): Promise<T>;
    /** A new reply id in this node's namespace, which `awaitReply` waits on without a subscription of its own. */
    newReplyTo(): string;
  }
}

/** Each API node holds one Redis subscriber connection, shared by every request that waits on a job. */
export default fp(
  async (app: FastifyInstance) => {
    const subscriber = app.watchRedis(
      connectSubscriber(app.redis, app.keys.seq, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }),
    );
    const waiter = createReplyWaiter(subscriber, app.keys, app.log);
    app.decorate('newReplyTo', waiter.newReplyTo);
    app.decorate('awaitReply', async <T>(replyTo: string, enqueue: () => Promise<unknown>, options: WaitOptions<T>) => {
      try {
        return await waiter.awaitReply(replyTo, enqueue, options);
      } catch (err) {
        throw err instanceof ReplyError ? new AppError(err.status, err.message, err.retryAfterSeconds) : err;
      }
    });
    app.addHook('onClose', async () => waiter.close());
  },
  { name: 'replies', dependencies: ['config', 'redis'] },
);
