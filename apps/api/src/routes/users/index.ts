import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  endMemberSessions,
  findMember,
  listMembers,
  removeMember,
  setMemberRole,
  transaction,
  type MemberRow,
} from '@sightline/db';
import {
  DeletedSchema,
  DetailSchema,
  errorResponses,
  SessionsEndedSchema,
  UserParams,
  UserRoleSchema,
  UserSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { recordChange } from '../../services/audit';

const userToWire = (u: MemberRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  created_at: u.created_at.toISOString(),
  last_seen_at: u.last_seen_at?.toISOString() ?? null,
});

// A member as the audit log records them.
const recorded = (u: MemberRow) => ({ email: u.email, name: u.name, role: u.role });
const target = (u: MemberRow) => ({ kind: 'user' as const, id: u.id, name: u.email });

const LAST_ADMIN = "this is the organization's last admin: make someone else admin first";

/**
 * The organization's people: everyone reads who they are (their names show beside their remarks); admins
 * change their roles, end their sessions, and remove them.
 */
export default async function userRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/users',
    {
      schema: {
        response: { 200: z.array(UserSchema), ...errorResponses },
        summary: "The organization's people, with their roles and last requests, by name",
        tags: ['people'],
      },
    },
    async (req) => (await listMembers(app.sql, req.organizationId)).map(userToWire),
  );

  app.patch(
    '/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: UserParams,
        body: UserRoleSchema,
        response: { 200: UserSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary: "Change a person's role in the organization (at their next request); never the last admin's",
        tags: ['people'],
      },
    },
    async (req) => {
      const changed = await transaction(app.sql, async (tx) => {
        const result = await setMemberRole(tx, req.organizationId, req.params.id, req.body.role);
        if (typeof result === 'string') return result;
        const { before, after } = result;
        if (before.role !== after.role)
          await recordChange(tx, req, {
            action: 'update',
            target: target(after),
            before: recorded(before),
            after: recorded(after),
          });
        return after;
      });
      if (changed === 'not found') throw notFound('user');
      if (changed === 'last admin') throw new AppError(409, LAST_ADMIN);
      return userToWire(changed);
    },
  );

  app.delete(
    '/users/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: UserParams,
        response: { 200: DeletedSchema, 404: DetailSchema, 409: DetailSchema, ...errorResponses },
        summary:
          'Remove a person from the organization: their sessions in it end at once on every API node, and the keys they made in it are revoked',
        tags: ['people'],
      },
    },
    async (req) => {
      const removed = await transaction(app.sql, async (tx) => {
        const result = await removeMember(tx, req.organizationId, req.params.id);
        if (typeof result === 'string') return result;
        await recordChange(tx, req, {
          action: 'remove',
          target: target(result.before),
          before: { ...recorded(result.before), keys_revoked: result.revokedKeys.length },
        });
        return result;
      });
      if (removed === 'not found') throw notFound('user');
      if (removed === 'last admin') throw new AppError(409, LAST_ADMIN);
      if (removed === 'last admin key')
        throw new AppError(
          409,
          "this person made all of the organization's admin keys, which their removal would revoke: create another admin key first",
        );
      // Other nodes stop honouring the keys within AUTH_CACHE_TTL_MS; sessions are PostgreSQL's, ended already.
      for (const keyHash of removed.revokedKeys) app.forgetApiKey(keyHash);
      return { id: req.params.id, deleted: true };
    },
  );

  app.delete(
    '/users/:id/sessions',
    {
      config: { access: 'admin' },
      schema: {
        params: UserParams,
        response: { 200: SessionsEndedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'End every session of a person in the organization, at once on every API node (they sign in again)',
        tags: ['people'],
      },
    },
    async (req) => {
      const ended = await transaction(app.sql, async (tx) => {
        const member = await findMember(tx, req.organizationId, req.params.id);
        if (!member) return null;
        const count = await endMemberSessions(tx, req.organizationId, member.id);
        await recordChange(tx, req, { action: 'end_sessions', target: target(member), before: { sessions: count } });
        return count;
      });
      if (ended === null) throw notFound('user');
      return { id: req.params.id, sessions_ended: ended };
    },
  );
}
