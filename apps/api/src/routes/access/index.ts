import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorResponses, WhoAmISchema } from '@sightline/schemas';
import { userOf } from '../remarks/span-remarks';
import apiKeys from './api-keys';

/** Who the caller is, and the organization's API keys (admins only, in `api-keys.ts`). */
export default async function accessRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/me',
    {
      schema: {
        response: { 200: WhoAmISchema, ...errorResponses },
        summary: "The caller's organization, role and label",
        tags: ['access'],
      },
    },
    async (req) => ({
      organization_id: req.organizationId,
      organization_name: req.caller.organizationName,
      role: req.caller.role,
      label: req.caller.label,
      key_id: req.caller.keyId,
      // The console compares remarks' authors with this, so it sees as its own exactly what the API lets it delete.
      remark_author: userOf(req),
    }),
  );

  await app.register(apiKeys);
}
