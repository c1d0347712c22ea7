import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { hashPassword, verifyPassword } from '@sightline/core';
import { findUserByEmail, findValidInvitation, type ValidInvitation } from '@sightline/db';
import {
  AcceptInvitationSchema,
  DetailSchema,
  errorResponses,
  InvitationPreviewSchema,
  InvitationQuery,
  Password,
  SignedInSchema,
} from '@sightline/schemas';
import { AppError, RequestValidationError } from '../../errors';
import { loginLimits } from '../../services/login-limits';
import { INVALID_INVITATION, joinByInvitation } from '../../services/invitation-joining';
import { signInPerson } from '../../services/session-cookie';

async function validInvitation(app: FastifyInstance, token: string): Promise<ValidInvitation> {
  const invitation = await findValidInvitation(app.sql, token);
  if (!invitation) throw new AppError(404, INVALID_INVITATION);
  return invitation;
}

/**
 * An invitation's link, before any credential (registered in sign-in.ts's scope, whose hook refuses
 * cross-site posts): what it invites to and how it may be accepted, and its acceptance with a password,
 * which creates the account (or, for an email that has one, joins it once its password is checked) and signs
 * the person in. Acceptance through single sign-on is oidc.ts's.
 */
export default async function invitationAcceptanceRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  const limits = loginLimits(app);

  app.get(
    '/invitation',
    {
      schema: {
        querystring: InvitationQuery,
        response: { 200: InvitationPreviewSchema, 404: DetailSchema, ...errorResponses },
        summary: "What an invitation's link invites to: the email, role and organization",
        tags: ['auth'],
      },
    },
    async (req) => {
      const invitation = await validInvitation(app, req.query.token);
      const existing = await findUserByEmail(app.sql, invitation.email);
      const { config } = app;
      return {
        email: invitation.email,
        role: invitation.role,
        organization_name: invitation.organization_name,
        existing_account: !!existing,
        password: !config.OIDC_ONLY && (!existing || !!existing.password_hash),
        sso: config.OIDC_ISSUER ? { name: config.OIDC_NAME } : null,
      };
    },
  );

  app.post(
    '/accept-invitation',
    {
      schema: {
        body: AcceptInvitationSchema,
        response: {
          200: SignedInSchema,
          ...errorResponses,
          401: DetailSchema.describe("the existing account's password is wrong"),
          403: DetailSchema.describe('passwords are off (OIDC_ONLY): accept through /auth/oidc/start?invitation='),
          404: DetailSchema,
          409: DetailSchema,
          429: DetailSchema,
        },
        summary:
          'Accept an invitation (once) with a password: creates the account, or joins the existing one once its password is checked; sets the session cookie. An account without a password (single sign-on) accepts through /auth/oidc/start?invitation=',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      const { token, name, password } = req.body;
      const { config } = app;
      const sso = config.OIDC_ISSUER ? config.OIDC_NAME : 'single sign-on';
      if (config.OIDC_ONLY)
        throw new AppError(403, `password sign-in is off on this server: accept the invitation with ${sso}`);
      const invitation = await validInvitation(app, token);
      const existing = await findUserByEmail(app.sql, invitation.email);
      let newAccount: { name: string; passwordHash: string } | null = null;
      if (existing) {
        if (!existing.password_hash)
          throw new AppError(409, `${existing.email} signs in with ${sso}, not a password: accept with ${sso}`);
        // A password checked here is guessed as at sign-in: the same limits hold.
        await limits.attempt(existing.email, req.ip);
        if (!(await verifyPassword(password, existing.password_hash))) {
          await limits.failed(existing.email);
          throw new AppError(401, `wrong password for ${existing.email}`);
        }
        await limits.succeeded(existing.email);
      } else {
        const issues = [
          ...(name ? [] : [{ loc: ['body', 'name'], msg: 'a new account needs a name', type: 'missing' }]),
          ...(Password.safeParse(password).error?.issues.map((i) => ({
            loc: ['body', 'password'],
            msg: i.message,
            type: i.code,
          })) ?? []),
        ];
        if (issues.length) throw new RequestValidationError(issues);
        newAccount = { name: name!, passwordHash: await hashPassword(password) };
      }

      const user = await joinByInvitation(app.sql, invitation, existing ? { existing } : { create: newAccount! });
      return signInPerson(req, reply, user, { organizationId: invitation.organization_id, role: invitation.role });
    },
  );
}
