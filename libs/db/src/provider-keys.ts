import type { Sql } from './client';

export type SavedProviderKey = {
  provider: string;
  sealed_key: string;
  key_hint: string;
  base_url: string | null;
  max_concurrent: number | null;
  rpm: number | null;
  tpm: number | null;
  created_at: Date;
  updated_at: Date;
};

/** Requests at once, requests a minute and tokens a minute a provider key allows (null: no limit). */
export type ProviderLimits = { max_concurrent: number | null; rpm: number | null; tpm: number | null };

export async function saveProviderKey(
  sql: Sql,
  organizationId: string,
  key: { provider: string; sealed: string; hint: string; baseUrl: string | null } & Partial<ProviderLimits>,
) {
  await sql`
    insert into provider_keys (organization_id, provider, sealed_key, key_hint, base_url, max_concurrent, rpm, tpm)
    values (${organizationId}, ${key.provider}, ${key.sealed}, ${key.hint}, ${key.baseUrl},
            ${key.max_concurrent ?? null}, ${key.rpm ?? null}, ${key.tpm ?? null})
    on conflict (organization_id, provider) do update
      set sealed_key = excluded.sealed_key, key_hint = excluded.key_hint, base_url = excluded.base_url,
          max_concurrent = excluded.max_concurrent, rpm = excluded.rpm, tpm = excluded.tpm, updated_at = now()`;
}

export function listProviderKeys(sql: Sql, organizationId: string) {
  return sql<SavedProviderKey[]>`
    select provider, sealed_key, key_hint, base_url, max_concurrent, rpm, tpm, created_at, updated_at
    from provider_keys where organization_id = ${organizationId} order by provider`;
}

export async function findProviderKey(
  sql: Sql,
  organizationId: string,
  provider: string,
): Promise<SavedProviderKey | null> {
  const [row] = await sql<SavedProviderKey[]>`
    select provider, sealed_key, key_hint, base_url, max_concurrent, rpm, tpm, created_at, updated_at
    from provider_keys where organization_id = ${organizationId} and provider = ${provider}`;
  return row ?? null;
}

export async function deleteProviderKey(sql: Sql, organizationId: string, provider: string): Promise<boolean> {
  const rows =
    await sql`delete from provider_keys where organization_id = ${organizationId} and provider = ${provider} returning 1`;
  return rows.length > 0;
}
