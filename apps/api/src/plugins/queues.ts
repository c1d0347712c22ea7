import fp from 'fastify-plugin';
import { createProducer, type Producer, type QueueName } from '@sightline/queues';
import { connectRedis, logQueueErrors } from '@sightline/runtime';
import { API_REDIS_OPTIONS } from './redis';

declare module 'fastify' {
  interface FastifyInstance {
    /** One a span-write shard, in the order of `spanShards`. */
    spanWrites: Producer<'span-write'>[];
    completionJobs: Producer<'completion'>;
    finalizeJobs: Producer<'experiment-finalize'>;
    evalBackfills: Producer<'eval-backfill'>;
  }
}

/** The producers of the queues the API feeds, on a Redis connection of their own. */
export default fp(
  async (app) => {
    const connection = app.watchRedis(connectRedis(app.config, API_REDIS_OPTIONS));
    const produce = <N extends QueueName>(name: N, prefix = app.keyPrefix) => {
      const producer = createProducer(name, connection, prefix);
      logQueueErrors(producer.queue, app.log);
      return producer;
    };
    app.decorate(
      'spanWrites',
      app.spanShards.all.map((shard) => produce('span-write', shard.prefix)),
    );
    app.decorate('completionJobs', produce('completion'));
    app.decorate('finalizeJobs', produce('experiment-finalize'));
    app.decorate('evalBackfills', produce('eval-backfill'));
    app.addHook('onClose', async () => {
      await Promise.all([
        ...app.spanWrites.map((producer) => producer.close()),
        app.completionJobs.close(),
        app.finalizeJobs.close(),
        app.evalBackfills.close(),
      ]);
      connection.disconnect();
    });
  },
  { name: 'queues', dependencies: ['config', 'redis'] },
);
