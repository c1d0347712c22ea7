import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createInvitation,
  emailIsMember,
  listPendingInvitations,
  revokeInvitation,
  transaction,
  type InvitationRow,
} from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  InvitationCreatedSchema,
  InvitationCreateSchema,
  InvitationParams,
  InvitationSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { recordChange } from '../../services/audit';
import { mailInvitation } from '../../services/invitation-mail';
import { publicOrigin } from '../../services/session-cookie';

const invitationToWire = (i: InvitationRow) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invited_by: i.invited_by,
  created_at: i.created_at.toISOString(),
  expires_at: i.expires_at.toISOString(),
});

// An invitation as the audit log records it: never its token.
const recorded = (i: InvitationRow) => ({ email: i.email, role: i.role, expires_at: i.expires_at.toISOString() });
const target = (i: InvitationRow) => ({ kind: 'invitation' as const, id: i.id, name: i.email });

/**
 * Admins invite people by email and role: a one-time link to the console's acceptance page, shown once and
 * mailed when SMTP_URL is set (accepted through routes/auth/invitation-acceptance.ts).
 */
export default async function invitationRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/invitations',
    {
      config: { access: 'admin' },
      schema: {
        body: InvitationCreateSchema,
        response: { 200: InvitationCreatedSchema, 409: DetailSchema, ...errorResponses },
        summary:
          'Invite a person by email with a role: a one-time link valid 7 days, shown this once, and mailed when SMTP_URL is set',
        tags: ['people'],
      },
    },
    async (req) => {
      const { email, role } = req.body;
      const made = await transaction(app.sql, async (tx) => {
        if (await emailIsMember(tx, req.organizationId, email))
          throw new AppError(409, `${email} is already a member of this organization: change their role instead`);
        const invitation = await createInvitation(tx, {
          organizationId: req.organizationId,
          email,
          role,
          invitedBy: req.caller.userId,
        });
        await recordChange(tx, req, { action: 'create', target: target(invitation), after: recorded(invitation) });
        return invitation;
      });
      const link = `${publicOrigin(req)}/accept-invitation?token=${made.token}`;
      const mailed = await mailInvitation(req, {
        email,
        role,
        link,
        organizationName: req.caller.organizationName,
        invitedBy: req.caller.name ?? req.caller.label ?? 'An admin',
      });
      return { ...invitationToWire(made), link, mailed };
    },
  );

  app.get(
    '/invitations',
    {
      config: { access: 'admin' },
      schema: {
        response: { 200: z.array(InvitationSchema), ...errorResponses },
        summary:
          'The pending invitations (neither accepted nor expired), newest first; their links are not shown again',
        tags: ['people'],
      },
    },
    async (req) => (await listPendingInvitations(app.sql, req.organizationId)).map(invitationToWire),
  );

  app.delete(
    '/invitations/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: InvitationParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Revoke a pending invitation: its link stops working',
        tags: ['people'],
      },
    },
    async (req) => {
      const revoked = await transaction(app.sql, async (tx) => {
        const invitation = await revokeInvitation(tx, req.organizationId, req.params.id);
        if (invitation)
          await recordChange(tx, req, { action: 'revoke', target: target(invitation), before: recorded(invitation) });
        return invitation;
      });
      if (!revoked) throw notFound('invitation');
      return { id: req.params.id, deleted: true };
    },
  );
}
