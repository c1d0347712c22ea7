import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import { createApiKey, listApiKeys, revokeApiKey, transaction, type ApiKeyRow } from '@sightline/db';
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
import { recordChange } from '../../services/audit';

// Only the last four characters of a key are ever shown again.
const apiKeyToWire = (k: ApiKeyRow) => ({
  id: k.id,
  label: k.label,
  role: k.role,
  api_key: `...${k.key_hint}`,
  created_at: formatTimestamp(k.created_at),
  last_used_at: formatTimestamp(k.last_used_at),
});

// A key as the audit log records it: never the key, nor its hash.
const recorded = (k: ApiKeyRow) => ({ id: k.id, label: k.label, role: k.role, key_hint: k.key_hint });
const target = (k: ApiKeyRow) => ({ kind: 'api_key' as const, id: k.id, name: k.label });

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
      const created = await transaction(app.sql, async (tx) => {
        const made = await createApiKey(tx, req.organizationId, req.body);
        await recordChange(tx, req, { action: 'create', target: target(made), after: recorded(made) });
        return made;
      });
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
      const keyHash = await transaction(app.sql, async (tx) => {
        const key = (await listApiKeys(tx, req.organizationId)).find((k) => k.id === req.params.id);
        const revoked = await revokeApiKey(tx, req.organizationId, req.params.id);
        if (key && revoked instanceof Buffer)
          await recordChange(tx, req, { action: 'revoke', target: target(key), before: recorded(key) });
        return revoked;
      });
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
