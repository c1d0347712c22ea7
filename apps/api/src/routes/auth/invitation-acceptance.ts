import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { hashPassword, verifyPassword } from '@sightline/core';
import {
  addMembership,
  createUser,
  findUserByEmail,
  findValidInvitation,
  listMemberships,
  recordAudit,
  transaction,
  useInvitation,
  type UserRow,
  type ValidInvitation,
} from '@sightline/db';
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
import { signInPerson } from '../../services/session-cookie';

/** One answer for an unknown, used, revoked or expired link: the token's holder learns nothing more. */
const INVALID = 'this invitation is not valid: it was used, revoked or has expired';

async function validInvitation(app: FastifyInstance, token: string): Promise<ValidInvitation> {
  const invitation = await findValidInvitation(app.sql, token);
  if (!invitation) throw new AppError(404, INVALID);
  return invitation;
}

/**
 * An invitation's link, before any credential (registered in sign-in.ts's scope, whose hook refuses
 * cross-site posts): what it invites to, and its acceptance, which creates the account (or, for an email
 * that has one, joins it once its password is checked) and signs the person in.
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
      return {
        email: invitation.email,
        role: invitation.role,
        organization_name: invitation.organization_name,
        existing_account: !!(await findUserByEmail(app.sql, invitation.email)),
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
          404: DetailSchema,
          409: DetailSchema,
          429: DetailSchema,
        },
        summary:
          'Accept an invitation (once): creates the account, or joins the existing one once its password is checked; sets the session cookie',
        tags: ['auth'],
      },
    },
    async (req, reply) => {
      const { token, name, password } = req.body;
      const invitation = await validInvitation(app, token);
      const existing = await findUserByEmail(app.sql, invitation.email);
      let newAccount: { name: string; passwordHash: string } | null = null;
      if (existing) {
        // A password checked here is guessed as at sign-in: the same limits hold.
        await limits.attempt(existing.email, req.ip);
        if (!existing.password_hash || !(await verifyPassword(password, existing.password_hash))) {
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

      const user = await transaction(app.sql, async (tx): Promise<UserRow> => {
        // Marked used first: of two acceptances of one link, one alone gets past this.
        if (!(await useInvitation(tx, invitation.id))) throw new AppError(404, INVALID);
        const person = existing ?? (await createUser(tx, { email: invitation.email, ...newAccount! }));
        // The email got an account between the check above and now: its password was not checked.
        if (!person) throw new AppError(409, 'an account was just made for this email: open the link again');
        const joined = await listMemberships(tx, person.id);
        if (joined.some((m) => m.organization_id === invitation.organization_id))
          throw new AppError(409, `you are already a member of ${invitation.organization_name}: sign in`);
        await addMembership(tx, invitation.organization_id, person.id, invitation.role);
        await recordAudit(
          tx,
          invitation.organization_id,
          { keyId: null, userId: person.id, label: person.email, role: invitation.role },
          {
            action: 'accept',
            target: { kind: 'invitation', id: invitation.id, name: invitation.email },
            after: { email: invitation.email, role: invitation.role, new_account: !existing },
          },
        );
        return person;
      });
      return signInPerson(req, reply, user, { organizationId: invitation.organization_id, role: invitation.role });
    },
  );
}
