import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { hashPassword, verifyPassword } from '@sightline/core';
import { findUser, setPassword, switchSessionOrganization } from '@sightline/db';
import { DetailSchema, errorResponses, OrganizationSwitchSchema, PasswordChangeSchema } from '@sightline/schemas';
import { AppError } from '../../errors';
import { sessionOf } from '../../services/session-cookie';

/** A signed-in person's own account: their password, and which of their organizations they work in. */
export default async function accountRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const person = (userId: string | null) => {
    if (!userId) throw new AppError(403, 'a key has no password or organizations of its own: sign in as a person');
    return userId;
  };

  app.post(
    '/auth/password',
    {
      // Any role changes its own password.
      config: { access: 'read' },
      schema: {
        body: PasswordChangeSchema,
        response: { 200: DetailSchema, 403: DetailSchema, ...errorResponses },
        summary: 'Change your password (a one-time password first of all)',
        tags: ['auth'],
      },
    },
    async (req) => {
      const user = await findUser(app.sql, person(req.caller.userId));
      if (!user?.password_hash || !(await verifyPassword(req.body.current_password, user.password_hash)))
        throw new AppError(403, 'the current password is wrong');
      await setPassword(app.sql, user.id, await hashPassword(req.body.new_password));
      return { detail: 'password changed' };
    },
  );

  app.post(
    '/auth/organization',
    {
      config: { access: 'read' },
      schema: {
        body: OrganizationSwitchSchema,
        response: { 200: DetailSchema, 403: DetailSchema, ...errorResponses },
        summary: 'Work in another of your organizations (this session only)',
        tags: ['auth'],
      },
    },
    async (req) => {
      person(req.caller.userId);
      if (!(await switchSessionOrganization(app.sql, sessionOf(req)!, req.body.organization_id)))
        throw new AppError(403, 'you are no member of that organization');
      return { detail: 'organization switched' };
    },
  );
}
