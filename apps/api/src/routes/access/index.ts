import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { findUser, listMemberships } from '@sightline/db';
import { errorResponses, WhoAmISchema } from '@sightline/schemas';
import { userOf } from '../remarks/span-remarks';
import accountRoutes from '../auth/account';
import apiKeys from './api-keys';

/** Who the caller is, and the organization's API keys (admins only, in `api-keys.ts`). */
export default async function accessRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/me',
    {
      schema: {
        response: { 200: WhoAmISchema, ...errorResponses },
        summary: "The caller's organization, role and label, and the person signed in",
        tags: ['access'],
      },
    },
    async (req) => {
      const { caller } = req;
      const user = caller.userId ? await findUser(app.sql, caller.userId) : null;
      const organizations = caller.userId
        ? (await listMemberships(app.sql, caller.userId)).map((m) => ({
            id: m.organization_id,
            name: m.organization_name,
            role: m.role,
          }))
        : [{ id: req.organizationId, name: caller.organizationName, role: caller.role }];
      return {
        organization_id: req.organizationId,
        organization_name: caller.organizationName,
        role: caller.role,
        label: caller.label,
        key_id: caller.keyId,
        // The console compares remarks' authors with this, so it sees as its own exactly what the API lets it delete.
        remark_author: userOf(req),
        user: user && { id: user.id, email: user.email, name: user.name },
        organizations,
        must_change_password: user?.must_change_password ?? false,
      };
    },
  );

  await app.register(apiKeys);
  await app.register(accountRoutes);
}
