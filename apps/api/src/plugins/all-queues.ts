import { Queue } from 'bullmq';
import fp from 'fastify-plugin';
import { queues, type QueueName } from '@sightline/queues';

declare module 'fastify' {
  interface FastifyInstance {
    /** A handle on every queue of the registry, for the views of them all: a queue added there appears in both. */
    allQueues: Queue[];
  }
}

/** Queue handles for /metrics and the dashboard, on the API's Redis connection (they open none of their own). */
export default fp(
  async (app) => {
    const all = (Object.keys(queues) as QueueName[]).map((name) => {
      const queue = new Queue(name, { connection: app.redis, prefix: app.keyPrefix });
      queue.on('error', (err) => app.log.debug({ err, queue: name }, 'queue connection error'));
      return queue;
    });
    app.decorate('allQueues', all);
    app.addHook('onClose', async () => void (await Promise.all(all.map((q) => q.close()))));
  },
  { name: 'all-queues', dependencies: ['config', 'redis'] },
);
