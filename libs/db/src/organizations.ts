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
};

export function listApiKeys(sql: Sql, organizationId: string) {
  return sql<ApiKeyRow[]>`
    select id, label, role, key_hint, created_at, last_used_at from api_keys
    where organization_id = ${organizationId} order by created_at, id`;
}

/** Creates a key for the organization and answers it with its plain key, which is never stored. */
export async function createApiKey(
  sql: Sql,
  organizationId: string,
  holder: ApiKeyHolder,
): Promise<ApiKeyRow & { key: string }> {
  const key = newApiKey();
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys (organization_id, key_hash, key_hint, role, label)
    values (${organizationId}, ${hashApiKey(key)}, ${key.slice(-4)}, ${holder.role}, ${holder.label ?? null})
    returning id, label, role, key_hint, created_at, last_used_at`;
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
  return transaction(sql, async (tx) => {
    // The organization's keys are locked, so that two admins revoking each other cannot leave none.
    const keys = await tx<{ id: string; role: ApiKeyRole; key_hash: Buffer }[]>`
      select id, role, key_hash from api_keys where organization_id = ${organizationId} for update`;
    const key = keys.find((k) => k.id === id);
    if (!key) return null;
    if (key.role === 'admin' && keys.filter((k) => k.role === 'admin').length === 1) return 'last admin';
    await tx`delete from api_keys where id = ${id}`;
    return key.key_hash;
  });
}
