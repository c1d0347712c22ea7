import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '@sightline/db';
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateSchema,
  ApiKeyParams,
  ApiKeySchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';

// Only the last four characters of a key are ever shown again.
const apiKeyToWire = (k: ApiKeyRow) => ({
  id: k.id,
  label: k.label,
  role: k.role,
  api_key: `...${k.key_hint}`,
  created_at: formatTimestamp(k.created_at),
  last_used_at: formatTimestamp(k.last_used_at),
});

/** The organization's API keys (admins only). */
export default async function apiKeyRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        response: { 200: z.array(ApiKeySchema), ...errorResponses },
        summary: "The organization's API keys (last 4 characters only)",
        tags: ['access'],
      },
    },
    async (req) => (await listApiKeys(app.sql, req.organizationId)).map(apiKeyToWire),
  );

  app.post(
    '/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        body: ApiKeyCreateSchema,
        response: { 200: ApiKeyCreatedSchema, ...errorResponses },
        summary: 'Create an API key; the answer holds the whole key, this once',
        tags: ['access'],
      },
    },
    async (req) => {
      const created = await createApiKey(app.sql, req.organizationId, req.body);
      return { ...apiKeyToWire(created), key: created.key };
    },
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: ApiKeyParams,
        response: { 200: DeletedSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Revoke an API key (other API nodes stop honouring it within AUTH_CACHE_TTL_MS)',
        tags: ['access'],
      },
    },
    async (req) => {
      const keyHash = await revokeApiKey(app.sql, req.organizationId, req.params.id);
      if (!keyHash) throw notFound('API key');
      if (keyHash === 'last admin')
        throw new AppError(
          409,
          "this is the organization's last admin key: create another admin key before revoking it",
        );
      app.forgetApiKey(keyHash);
      return { id: req.params.id, deleted: true };
    },
  );
}
