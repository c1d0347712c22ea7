import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { publishInOrder } from '@sightline/runtime';
import { formatTimestamp, seal } from '@sightline/core';
import {
  deleteProviderKey,
  findProviderKey,
  listProviderKeys,
  saveProviderKey,
  transaction,
  type SavedProviderKey,
} from '@sightline/db';
import { nonPublicMessage, nonPublicReason } from '@sightline/llm/base-url';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  ProviderKeyCreateSchema,
  ProviderKeySchema,
  UrlText,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { recordChange } from '../../services/audit';

// Only the last four characters of a saved key are ever shown.
const keyToWire = (k: Omit<SavedProviderKey, 'sealed_key' | 'created_at'>) => ({
  provider: k.provider,
  api_key: `...${k.key_hint}`,
  base_url: k.base_url,
  max_concurrent: k.max_concurrent,
  rpm: k.rpm,
  tpm: k.tpm,
  updated_at: formatTimestamp(k.updated_at),
});

/** A saved key as the audit log records it: its sealed key is a secret field, which the log only marks as set. */
const recorded = ({ created_at: _c, updated_at: _u, sealed_key, ...k }: SavedProviderKey) => ({
  ...k,
  api_key: sealed_key,
});

/**
 * Tells the workers that the organization's keys changed, before the change is answered: they cache saved
 * keys, and a key saved or deleted a moment ago must be the one used. Should Redis miss it, their cache
 * forgets within 10 s anyway.
 */
const announce = (app: FastifyInstance, organizationId: string) =>
  publishInOrder(app.redis, app.keys.seq, app.keys.providerKeysChanged, organizationId).catch((err: Error) =>
    app.log.warn({ err: err.message }, 'provider key change not announced'),
  );

/** Seals and saves the key; a base URL must be public unless the server allows private ones. */
async function saveKey(
  app: FastifyInstance,
  req: FastifyRequest,
  { provider, api_key, base_url, ...given }: z.infer<typeof ProviderKeyCreateSchema>,
) {
  const { organizationId } = req;
  const secretsKey = app.config.SECRETS_KEY;
  if (!secretsKey) throw new AppError(503, 'saving provider keys needs SECRETS_KEY to be configured on the server');
  const refused = base_url && !app.config.ALLOW_PRIVATE_PROVIDER_URLS ? await nonPublicReason(base_url) : null;
  if (refused)
    throw new RequestValidationError([
      { loc: ['body', 'base_url'], msg: nonPublicMessage(refused), type: 'value_error' },
    ]);
  const hint = api_key.slice(-4);
  const limits = { max_concurrent: given.max_concurrent ?? null, rpm: given.rpm ?? null, tpm: given.tpm ?? null };
  await transaction(app.sql, async (tx) => {
    const before = await findProviderKey(tx, organizationId, provider);
    const sealed = seal(secretsKey, api_key);
    await saveProviderKey(tx, organizationId, { provider, sealed, hint, baseUrl: base_url ?? null, ...limits });
    await recordChange(tx, req, {
      action: before ? 'update' : 'create',
      target: { kind: 'provider_key', id: provider, name: provider },
      before: before && recorded(before),
      after: { provider, api_key, key_hint: hint, base_url: base_url ?? null, ...limits },
    });
  });
  await announce(app, organizationId);
  return { provider, key_hint: hint, base_url: base_url ?? null, ...limits, updated_at: new Date() };
}

export default async function providerKeyRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/provider-keys',
    {
      config: { access: 'admin' },
      schema: {
        body: ProviderKeyCreateSchema,
        response: { 200: ProviderKeySchema, ...errorResponses },
        summary: "Save (or replace) the organization's key for a provider",
        tags: ['provider keys'],
      },
    },
    async (req) => keyToWire(await saveKey(app, req, req.body)),
  );

  app.get(
    '/provider-keys',
    {
      config: { access: 'admin' },
      schema: {
        response: { 200: z.array(ProviderKeySchema), ...errorResponses },
        summary: "The organization's saved provider keys (last 4 characters only)",
        tags: ['provider keys'],
      },
    },
    async (req) => (await listProviderKeys(app.sql, req.organizationId)).map(keyToWire),
  );

  app.delete(
    '/provider-keys/:provider',
    {
      config: { access: 'admin' },
      schema: {
        params: z.object({ provider: UrlText.pipe(z.string().min(1)) }),
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a saved provider key',
        tags: ['provider keys'],
      },
    },
    async (req) => {
      const { provider } = req.params;
      await transaction(app.sql, async (tx) => {
        const before = await findProviderKey(tx, req.organizationId, provider);
        if (!before || !(await deleteProviderKey(tx, req.organizationId, provider))) throw notFound('provider key');
        const target = { kind: 'provider_key' as const, id: provider, name: provider };
        await recordChange(tx, req, { action: 'delete', target, before: recorded(before) });
      });
      await announce(app, req.organizationId);
      return { provider: req.params.provider, deleted: true };
    },
  );
}
