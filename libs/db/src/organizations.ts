import { hash, randomBytes } from 'node:crypto';
import type { ApiKeyRole } from '@sightline/schemas';
import { transaction, type Sql } from './client';

/** Every authenticated request hashes its key: the one-shot hash costs half of a Hash object's 2.6 µs. */
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

export async function ensureOrganization(sql: Sql, name: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into organizations (name) values (${name})
    on conflict (name) do update set name = excluded.name
    returning id`;
  return row.id;
}

export type ApiKeyHolder = { role: ApiKeyRole; label?: string | null };

/** A new key: `sl_` and 32 random bytes. */
const newApiKey = () => `sl_${randomBytes(32).toString('base64url')}`;

/** Stores only the key's hash; the plain key exists once, in the return value. */
export async function addApiKey(
  sql: Sql,
  organizationId: string,
  key = newApiKey(),
  holder: ApiKeyHolder = { role: 'admin' },
): Promise<string> {
  await sql`
    insert into api_keys (organization_id, key_hash, key_hint, role, label)
    values (${organizationId}, ${hashApiKey(key)}, ${key.slice(-4)}, ${holder.role}, ${holder.label ?? null})
    on conflict (key_hash) do nothing`;
  return key;
}

export type KeyOwner = {
  organizationId: string;
  organizationName: string;
  keyHash: Buffer;
  keyId: string;
  role: ApiKeyRole;
  label: string | null;
};

/** The key's organization and holder; marks it used (the caller looks keys up once per cache period). */
export async function findKeyOwner(sql: Sql, keyHash: Buffer): Promise<KeyOwner | null> {
  const [row] = await sql<
    { id: string; organization_id: string; name: string; key_hash: Buffer; role: ApiKeyRole; label: string | null }[]
  >`
    update api_keys k set last_used_at = now() from organizations o
    where k.key_hash = ${keyHash} and o.id = k.organization_id
    returning k.id, k.organization_id, o.name, k.key_hash, k.role, k.label`;
  return row
    ? {
        organizationId: row.organization_id,
        organizationName: row.name,
        keyHash: row.key_hash,
        keyId: row.id,
        role: row.role,
        label: row.label,
      }
    : null;
}

export type ApiKeyRow = {
  id: string;
  label: string | null;
  role: ApiKeyRole;
  key_hint: string;
  created_at: Date;
  last_used_at: Date | null;
  /** The person who made it, or null (a service key, or one made with a key). */
  created_by: { id: string; email: string; name: string } | null;
};

const apiKeyColumns = (sql: Sql) => sql`
  k.id, k.label, k.role, k.key_hint, k.created_at, k.last_used_at,
  (select json_build_object('id', u.id, 'email', u.email, 'name', u.name) from users u where u.id = k.created_by)
    as created_by`;

/** The organization's keys, or only those `createdBy` made. */
export function listApiKeys(sql: Sql, organizationId: string, createdBy?: string) {
  return sql<ApiKeyRow[]>`
    select ${apiKeyColumns(sql)} from api_keys k
    where k.organization_id = ${organizationId} ${createdBy ? sql`and k.created_by = ${createdBy}` : sql``}
    order by k.created_at, k.id`;
}

/**
 * Creates a key for the organization, made by `createdBy` (a person; none for a service key or one made
 * with a key), and answers it with its plain key, which is never stored.
 */
export async function createApiKey(
  sql: Sql,
  organizationId: string,
  holder: ApiKeyHolder & { createdBy: string | null },
): Promise<ApiKeyRow & { key: string }> {
  const key = newApiKey();
  const [row] = await sql<ApiKeyRow[]>`
    with k as (
      insert into api_keys (organization_id, key_hash, key_hint, role, label, created_by)
      values (${organizationId}, ${hashApiKey(key)}, ${key.slice(-4)}, ${holder.role}, ${holder.label ?? null},
        ${holder.createdBy})
      returning *)
    select ${apiKeyColumns(sql)} from k`;
  return { ...row, key };
}

/**
 * Revokes a key: its hash (to drop it from caches), `'last admin'` when it is the organization's last
 * admin key (kept, so that someone can still manage the organization), or null when there is no such key.
 */
export async function revokeApiKey(
  sql: Sql,
  organizationId: string,
  id: string,
): Promise<Buffer | 'last admin' | null> {
  const revoked = await revokeApiKeys(sql, organizationId, (k) => k.id === id);
  return revoked === 'last admin' ? revoked : (revoked[0] ?? null);
}

/**
 * Revokes every key the person made in the organization (they are leaving it): the keys' hashes, or
 * `'last admin'` when those are all the organization's admin keys (all kept, as revokeApiKey keeps the last).
 */
export function revokeKeysMadeBy(sql: Sql, organizationId: string, userId: string): Promise<Buffer[] | 'last admin'> {
  return revokeApiKeys(sql, organizationId, (k) => k.created_by === userId);
}

type LockedKey = { id: string; role: ApiKeyRole; key_hash: Buffer; created_by: string | null };

/** Revokes the organization's keys `chosen` picks, unless they are all of its admin keys. */
function revokeApiKeys(
  sql: Sql,
  organizationId: string,
  chosen: (k: LockedKey) => boolean,
): Promise<Buffer[] | 'last admin'> {
  return transaction(sql, async (tx) => {
    // The organization's keys are locked, so that two admins revoking each other cannot leave none.
    const keys = await tx<LockedKey[]>`
      select id, role, key_hash, created_by from api_keys where organization_id = ${organizationId} for update`;
    const gone = keys.filter(chosen);
    const admins = keys.filter((k) => k.role === 'admin');
    if (admins.length && admins.every((k) => gone.includes(k))) return 'last admin';
    if (gone.length) await tx`delete from api_keys where id = any(${gone.map((k) => k.id)}::uuid[])`;
    return gone.map((k) => k.key_hash);
  });
}
