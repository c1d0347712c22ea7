// The people of one organization, as its admins manage them: their roles, and their removal. An
// organization keeps at least one admin among its people once it has any (the last cannot be demoted or
// removed), as it keeps its last admin key.
import type { ApiKeyRole } from '@sightline/schemas';
import { transaction, type Sql } from './client';
import { revokeKeysMadeBy } from './organizations';

export type MemberRow = {
  id: string;
  email: string;
  name: string;
  role: ApiKeyRole;
  /** When they joined the organization. */
  created_at: Date;
  last_seen_at: Date | null;
};

/** The organization's people, by name; or the one person `userId`. */
export function listMembers(sql: Sql, organizationId: string, userId?: string) {
  return sql<MemberRow[]>`
    select u.id, u.email, u.name, m.role, m.created_at,
      (select max(s.last_seen_at) from user_sessions s
        where s.user_id = u.id and s.organization_id = m.organization_id) as last_seen_at
    from memberships m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} ${userId ? sql`and m.user_id = ${userId}` : sql``}
    order by lower(u.name), u.id`;
}

export async function findMember(sql: Sql, organizationId: string, userId: string): Promise<MemberRow | null> {
  const [row] = await listMembers(sql, organizationId, userId);
  return row ?? null;
}

type Refusal = 'not found' | 'last admin';

/** Locks the organization's memberships: two admins demoting or removing each other cannot leave none. */
async function lockedMember(tx: Sql, organizationId: string, userId: string) {
  const members = await tx<{ user_id: string; role: ApiKeyRole }[]>`
    select user_id, role from memberships where organization_id = ${organizationId} for update`;
  const member = members.find((m) => m.user_id === userId);
  const lastAdmin = member?.role === 'admin' && members.filter((m) => m.role === 'admin').length === 1;
  return { member, lastAdmin };
}

/** Gives the member another role: the member before and after, or why not. */
export function setMemberRole(
  sql: Sql,
  organizationId: string,
  userId: string,
  role: ApiKeyRole,
): Promise<{ before: MemberRow; after: MemberRow } | Refusal> {
  return transaction(sql, async (tx) => {
    const { member, lastAdmin } = await lockedMember(tx, organizationId, userId);
    if (!member) return 'not found';
    if (lastAdmin && role !== 'admin') return 'last admin';
    const before = (await findMember(tx, organizationId, userId))!;
    await tx`update memberships set role = ${role} where organization_id = ${organizationId} and user_id = ${userId}`;
    return { before, after: { ...before, role } };
  });
}

/**
 * Removes the person from the organization: their membership, their sessions in it, and the keys they made
 * in it (answered as hashes, to drop from caches). Refused for the last admin, and when their keys are all
 * the organization's admin keys.
 */
export function removeMember(
  sql: Sql,
  organizationId: string,
  userId: string,
): Promise<{ before: MemberRow; revokedKeys: Buffer[] } | Refusal | 'last admin key'> {
  return transaction(sql, async (tx) => {
    const { member, lastAdmin } = await lockedMember(tx, organizationId, userId);
    if (!member) return 'not found';
    if (lastAdmin) return 'last admin';
    const before = (await findMember(tx, organizationId, userId))!;
    const revokedKeys = await revokeKeysMadeBy(tx, organizationId, userId);
    if (revokedKeys === 'last admin') return 'last admin key';
    await tx`delete from memberships where organization_id = ${organizationId} and user_id = ${userId}`;
    await endMemberSessions(tx, organizationId, userId);
    return { before, revokedKeys };
  });
}

/** Ends every session of the person in the organization (every API node sees it at its next request). */
export async function endMemberSessions(sql: Sql, organizationId: string, userId: string): Promise<number> {
  const ended = await sql`delete from user_sessions where organization_id = ${organizationId} and user_id = ${userId}`;
  return ended.count;
}
