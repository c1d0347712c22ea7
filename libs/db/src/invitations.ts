// Admins' invitations to join an organization. The link's token is random and only its SHA-256 is kept;
// an invitation is valid until expires_at (PostgreSQL's clock, one for every API node) and used once.
import { hash, randomBytes } from 'node:crypto';
import type { ApiKeyRole } from '@sightline/schemas';
import type { Sql } from './client';

/** How long an invitation's link works. */
export const INVITATION_DAYS = 7;

const hashInvitationToken = (token: string) => hash('sha256', token, 'buffer');

export type InvitationRow = {
  id: string;
  email: string;
  role: ApiKeyRole;
  created_at: Date;
  expires_at: Date;
  invited_by: { id: string; email: string; name: string } | null;
};

const columns = (sql: Sql) => sql`
  i.id, i.email, i.role, i.created_at, i.expires_at,
  (select json_build_object('id', u.id, 'email', u.email, 'name', u.name) from users u where u.id = i.invited_by)
    as invited_by`;

/** Whether the email is already a member of the organization. */
export async function emailIsMember(sql: Sql, organizationId: string, email: string): Promise<boolean> {
  const [row] = await sql<{ member: boolean }[]>`
    select exists (
      select from memberships m join users u on u.id = m.user_id
      where m.organization_id = ${organizationId} and lower(u.email) = lower(${email})) as member`;
  return row.member;
}

/**
 * A new invitation, valid INVITATION_DAYS, answered with its token (32 random bytes, base64url), which is
 * never stored. It replaces the email's pending invitations to the organization, whose links stop working
 * (one link a person: the latest sent).
 */
export async function createInvitation(
  sql: Sql,
  invitation: { organizationId: string; email: string; role: ApiKeyRole; invitedBy: string | null },
): Promise<InvitationRow & { token: string }> {
  const token = randomBytes(32).toString('base64url');
  await sql`
    delete from invitations
    where organization_id = ${invitation.organizationId} and lower(email) = lower(${invitation.email})
      and accepted_at is null`;
  const [row] = await sql<InvitationRow[]>`
    with i as (
      insert into invitations (organization_id, email, role, token_hash, invited_by, expires_at)
      values (${invitation.organizationId}, ${invitation.email}, ${invitation.role}, ${hashInvitationToken(token)},
        ${invitation.invitedBy}, now() + make_interval(days => ${INVITATION_DAYS}))
      returning *)
    select ${columns(sql)} from i`;
  return { ...row, token };
}

/** The organization's invitations neither accepted nor expired, newest first. */
export function listPendingInvitations(sql: Sql, organizationId: string) {
  return sql<InvitationRow[]>`
    select ${columns(sql)} from invitations i
    where i.organization_id = ${organizationId} and i.accepted_at is null and i.expires_at > now()
    order by i.created_at desc, i.id`;
}

/** Revokes a pending invitation (its link stops working); null when the organization has no such one. */
export async function revokeInvitation(sql: Sql, organizationId: string, id: string): Promise<InvitationRow | null> {
  const [row] = await sql<InvitationRow[]>`
    with i as (
      delete from invitations
      where organization_id = ${organizationId} and id = ${id} and accepted_at is null
      returning *)
    select ${columns(sql)} from i`;
  return row ?? null;
}

export type ValidInvitation = {
  id: string;
  organization_id: string;
  organization_name: string;
  email: string;
  role: ApiKeyRole;
};

/** The invitation of a token while it can be accepted (not used, revoked or expired), else null. */
export async function findValidInvitation(sql: Sql, token: string): Promise<ValidInvitation | null> {
  const [row] = await sql<ValidInvitation[]>`
    select i.id, i.organization_id, o.name as organization_name, i.email, i.role
    from invitations i join organizations o on o.id = i.organization_id
    where i.token_hash = ${hashInvitationToken(token)} and i.accepted_at is null and i.expires_at > now()`;
  return row ?? null;
}

/** Marks the invitation used; false when it no longer can be (used meanwhile, revoked, or expired). */
export async function useInvitation(sql: Sql, id: string): Promise<boolean> {
  const used = await sql`
    update invitations set accepted_at = now() where id = ${id} and accepted_at is null and expires_at > now()`;
  return used.count > 0;
}
