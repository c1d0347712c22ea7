import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from './client';

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export async function ensureOrganization(sql: Sql, name: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into organizations (name) values (${name})
    on conflict (name) do update set name = excluded.name
    returning id`;
  return row.id;
}

/** Stores only the key's hash; the plain key exists once, in the return value. */
export async function addApiKey(sql: Sql, organizationId: string, key = `sl_${randomBytes(32).toString('base64url')}`): Promise<string> {
  await sql`
    insert into api_keys (organization_id, key_hash, key_hint)
    values (${organizationId}, ${hashApiKey(key)}, ${key.slice(-4)})
    on conflict (key_hash) do nothing`;
  return key;
}

export async function findOrganizationByKeyHash(sql: Sql, keyHash: Buffer): Promise<{ organizationId: string; keyHash: Buffer } | null> {
  const [row] = await sql<{ organization_id: string; key_hash: Buffer }[]>`
    select organization_id, key_hash from api_keys where key_hash = ${keyHash}`;
  return row ? { organizationId: row.organization_id, keyHash: row.key_hash } : null;
}
