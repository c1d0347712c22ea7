// People and the organizations they belong to. A person's email is unique whatever its case; their role
// is per organization (a membership), the roles keys have.
import type { ApiKeyRole } from '@sightline/schemas';
import type { Sql } from './client';

export type UserRow = {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  must_change_password: boolean;
  created_at: Date;
};

export type Membership = { organization_id: string; organization_name: string; role: ApiKeyRole };

/** A new person, or null when the email is taken. */
export async function createUser(
  sql: Sql,
  user: { email: string; name: string; passwordHash: string | null; mustChangePassword?: boolean },
): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`
    insert into users (email, name, password_hash, must_change_password)
    values (${user.email}, ${user.name}, ${user.passwordHash}, ${user.mustChangePassword ?? false})
    on conflict (lower(email)) do nothing
    returning *`;
  return row ?? null;
}

export async function findUserByEmail(sql: Sql, email: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from users where lower(email) = lower(${email})`;
  return row ?? null;
}

export async function findUser(sql: Sql, id: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select * from users where id = ${id}`;
  return row ?? null;
}

export async function setPassword(sql: Sql, userId: string, passwordHash: string, mustChange = false): Promise<void> {
  await sql`update users set password_hash = ${passwordHash}, must_change_password = ${mustChange} where id = ${userId}`;
}

/** Makes the person a member of the organization with `role`, or changes the role they have there. */
export async function addMembership(sql: Sql, organizationId: string, userId: string, role: ApiKeyRole) {
  await sql`
    insert into memberships (organization_id, user_id, role) values (${organizationId}, ${userId}, ${role})
    on conflict (organization_id, user_id) do update set role = excluded.role`;
}

/** The organizations the person belongs to, by name. */
export function listMemberships(sql: Sql, userId: string) {
  return sql<Membership[]>`
    select m.organization_id, o.name as organization_name, m.role from memberships m
    join organizations o on o.id = m.organization_id
    where m.user_id = ${userId} order by o.name`;
}

/** Whether any person exists: a new install offers to create the first admin until one does. */
export async function anyUser(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ any: boolean }[]>`select exists (select from users) as any`;
  return row.any;
}
