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
    const open = (name: QueueName, prefix: string) => {
      const queue = new Queue(name, { connection: app.redis, prefix });
      queue.on('error', (err) => app.log.debug({ err, queue: name }, 'queue connection error'));
      return queue;
    };
    // The span-write queues of the shards past the first (SPAN_WRITE_SHARDS) come after the registry's.
    const all = [
      ...(Object.keys(queues) as QueueName[]).map((name) => open(name, app.keyPrefix)),
      ...app.spanShards.all.slice(1).map((shard) => open('span-write', shard.prefix)),
    ];
    app.decorate('allQueues', all);
    app.addHook('onClose', async () => void (await Promise.all(all.map((q) => q.close()))));
  },
  { name: 'all-queues', dependencies: ['config', 'redis'] },
);
