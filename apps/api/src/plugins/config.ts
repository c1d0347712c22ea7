import fp from 'fastify-plugin';
import type { ApiEnv } from '@sightline/schemas';

declare module 'fastify' {
  interface FastifyInstance {
    config: ApiEnv;
  }
}

/** The API's environment, parsed once at start-up. */
export default fp<{ config: ApiEnv }>(
  async (app, { config }) => {
    app.decorate('config', config);
  },
  { name: 'config' },
);
