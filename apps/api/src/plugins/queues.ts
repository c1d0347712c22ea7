import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { createProducer, type Producer } from '@sightline/queues';
import { API_REDIS_OPTIONS } from './redis';

declare module 'fastify' {
  interface FastifyInstance {
    spanWrites: Producer<'span-write'>;
    completionJobs: Producer<'completion'>;
    finalizeJobs: Producer<'experiment-finalize'>;
    evalBackfills: Producer<'eval-backfill'>;
  }
}

/** The producers of the queues the API feeds, on a Redis connection of their own. */
export default fp(
  async (app) => {
    const connection = new Redis(app.config.REDIS_URL, API_REDIS_OPTIONS);
    connection.on('error', (err) => app.log.debug({ err }, 'redis connection error'));
    const prefix = app.config.QUEUE_PREFIX;
    app.decorate('spanWrites', createProducer('span-write', connection, prefix));
    app.decorate('completionJobs', createProducer('completion', connection, prefix));
    app.decorate('finalizeJobs', createProducer('experiment-finalize', connection, prefix));
    app.decorate('evalBackfills', createProducer('eval-backfill', connection, prefix));
    app.addHook('onClose', async () => {
      await Promise.all([
        app.spanWrites.close(),
        app.completionJobs.close(),
        app.finalizeJobs.close(),
        app.evalBackfills.close(),
      ]);
      connection.disconnect();
    });
  },
  { name: 'queues', dependencies: ['config'] },
);
