import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import { createApiKey, listApiKeys, revokeApiKey, transaction, type ApiKeyRow } from '@sightline/db';
import {
  ApiKeyCreatedSchema,
  ApiKeyCreateSchema,
  ApiKeyParams,
  ApiKeyRole,
  ApiKeySchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { roleRefusal } from '../../plugins/auth';
import { recordChange } from '../../services/audit';

// Only the last four characters of a key are ever shown again.
const apiKeyToWire = (k: ApiKeyRow) => ({
  id: k.id,
  label: k.label,
  role: k.role,
  api_key: `...${k.key_hint}`,
  created_at: formatTimestamp(k.created_at),
  last_used_at: formatTimestamp(k.last_used_at),
  created_by: k.created_by,
});

// A key as the audit log records it: never the key, nor its hash.
const recorded = (k: ApiKeyRow) => ({ id: k.id, label: k.label, role: k.role, key_hint: k.key_hint });
const target = (k: ApiKeyRow) => ({ kind: 'api_key' as const, id: k.id, name: k.label });

/** Roles from the highest: a key's role may not rank before its maker's. */
const rank = (role: ApiKeyRole) => ApiKeyRole.options.indexOf(role);

/** The keys the caller manages: all of the organization's for an admin; for another person, their own. */
const madeBy = (req: FastifyRequest) => (req.caller.role === 'admin' ? undefined : req.caller.userId!);

/** The organization's API keys: admins manage them all; each person makes and revokes their own. */
export default async function apiKeyRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  // A key manages keys only as an admin key, as before people had accounts: refused before its body is read.
  app.addHook('onRequest', async (req) => {
    if (!req.caller.userId && req.caller.role !== 'admin') throw roleRefusal(req.caller, 'admin');
  });

  app.get(
    '/api-keys',
    {
      // Any signed-in person (their own keys); keys: admins only (the hook above).
      config: { access: 'read' },
      schema: {
        response: { 200: z.array(ApiKeySchema), 403: DetailSchema, ...errorResponses },
        summary: "The organization's API keys (last 4 characters only): an admin's all, another person's own",
        tags: ['access'],
      },
    },
    async (req) => (await listApiKeys(app.sql, req.organizationId, madeBy(req))).map(apiKeyToWire),
  );

  app.post(
    '/api-keys',
    {
      config: { access: 'read' },
      schema: {
        body: ApiKeyCreateSchema,
        response: { 200: ApiKeyCreatedSchema, 403: DetailSchema, ...errorResponses },
        summary:
          "Create an API key, with a role no higher than yours (an admin's service key has no maker); the answer holds the whole key, this once",
        tags: ['access'],
      },
    },
    async (req) => {
      const { role, label, service } = req.body;
      const { caller } = req;
      if (rank(role) < rank(caller.role))
        throw new AppError(
          403,
          `your role (${caller.role}) cannot make ${role} keys: a key's role is no higher than its maker's`,
        );
      if (service && caller.role !== 'admin')
        throw new AppError(403, `your role (${caller.role}) cannot make service keys; ask an admin`);
      const created = await transaction(app.sql, async (tx) => {
        const made = await createApiKey(tx, req.organizationId, {
          role,
          label,
          createdBy: service ? null : caller.userId,
        });
        await recordChange(tx, req, { action: 'create', target: target(made), after: recorded(made) });
        return made;
      });
      return { ...apiKeyToWire(created), key: created.key };
    },
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { access: 'read' },
      schema: {
        params: ApiKeyParams,
        response: { 200: DeletedSchema, 403: DetailSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary:
          'Revoke an API key (an admin any, another person their own; other API nodes stop honouring it within AUTH_CACHE_TTL_MS)',
        tags: ['access'],
      },
    },
    async (req) => {
      const createdBy = madeBy(req);
      const keyHash = await transaction(app.sql, async (tx) => {
        const key = (await listApiKeys(tx, req.organizationId, createdBy)).find((k) => k.id === req.params.id);
        if (!key) return null;
        const revoked = await revokeApiKey(tx, req.organizationId, req.params.id);
        if (revoked instanceof Buffer)
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
