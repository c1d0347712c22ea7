// Signed-in browsers. A session is found by the SHA-256 of its cookie's id; it ends after SESSION_IDLE_HOURS
// without a request, at its absolute end (SESSION_MAX_DAYS after the sign-in), at sign-out, or when its
// person leaves the organization (their membership goes, and the role with it) or its key is revoked.
// Times are PostgreSQL's: one clock for every API node.
import type { ApiKeyRole } from '@sightline/schemas';
import type { Sql } from './client';

export type SessionOwner = {
  organizationId: string;
  organizationName: string;
  role: ApiKeyRole;
  /** The person signed in, or null for a session opened with an API key. */
  userId: string | null;
  email: string | null;
  name: string | null;
  mustChangePassword: boolean;
  /** The key a key's session was opened with. */
  keyId: string | null;
  keyLabel: string | null;
};

/** How often a session's last use is written: its idle end moves by this much at most late. */
const TOUCH_SECONDS = 60;

export async function openSession(
  sql: Sql,
  session: { idHash: Buffer; organizationId: string; userId?: string; apiKeyId?: string; maxDays: number },
): Promise<void> {
  await sql`
    insert into user_sessions (id_hash, organization_id, user_id, api_key_id, expires_at)
    values (${session.idHash}, ${session.organizationId}, ${session.userId ?? null}, ${session.apiKeyId ?? null},
      now() + make_interval(secs => ${session.maxDays * 86_400}))`;
}

/**
 * The session's owner while it lasts, else null. `touch` marks it used (a request); a stream's checks do not,
 * so that a tab left open ends at its idle time all the same.
 */
export async function findSessionOwner(
  sql: Sql,
  idHash: Buffer,
  idleHours: number,
  touch = true,
): Promise<SessionOwner | null> {
  const [row] = await sql<(SessionOwner & { stale: boolean })[]>`
    select s.organization_id as "organizationId", o.name as "organizationName",
      coalesce(m.role, k.role) as role, s.user_id as "userId", u.email, u.name,
      coalesce(u.must_change_password, false) as "mustChangePassword",
      s.api_key_id as "keyId", k.label as "keyLabel",
      s.last_seen_at < now() - make_interval(secs => ${TOUCH_SECONDS}) as stale
    from user_sessions s
    join organizations o on o.id = s.organization_id
    left join users u on u.id = s.user_id
    left join memberships m on m.user_id = s.user_id and m.organization_id = s.organization_id
    left join api_keys k on k.id = s.api_key_id
    where s.id_hash = ${idHash} and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(secs => ${idleHours * 3600})
      and coalesce(m.role, k.role) is not null`;
  if (!row) return null;
  if (touch && row.stale) await sql`update user_sessions set last_seen_at = now() where id_hash = ${idHash}`;
  const { stale: _, ...owner } = row;
  return owner;
}

export async function endSession(sql: Sql, idHash: Buffer): Promise<void> {
  await sql`delete from user_sessions where id_hash = ${idHash}`;
}

/** Moves a person's session to another of their organizations; false when they are no member of it. */
export async function switchSessionOrganization(sql: Sql, idHash: Buffer, organizationId: string): Promise<boolean> {
  const moved = await sql`
    update user_sessions s set organization_id = ${organizationId}
    where s.id_hash = ${idHash}
      and exists (select from memberships m where m.user_id = s.user_id and m.organization_id = ${organizationId})`;
  return moved.count > 0;
}
