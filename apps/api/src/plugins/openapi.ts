import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { VERSION } from '../version';

/** The OpenAPI document is generated from the same zod schemas that validate requests. */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        info: { title: 'Sightline', description: 'LLM tracing, evaluation and completion gateway', version: VERSION },
        components: { securitySchemes: { APIKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
        security: [{ APIKeyHeader: [] }],
      },
      transform: jsonSchemaTransform,
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
