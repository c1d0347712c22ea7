import { unseal } from '@sightline/core';
import { nonPublicLiteral, nonPublicMessage, ProviderError, publicOnlyFetch, resolveProvider } from '@sightline/llm';
import type { CompletionJob } from '@sightline/schemas';
import { envLimits, laneOf } from './lane-config';
import type { SavedKeys } from './saved-keys';

export type CredentialDeps = {
  savedKeys: SavedKeys;
  env: NodeJS.ProcessEnv;
  secretsKey?: Buffer;
  /** ALLOW_PRIVATE_PROVIDER_URLS: saved base URLs may reach non-public addresses. */
  allowPrivateUrls: boolean;
};

/**
 * The provider adapter and key for a call, by precedence: the request's own key, the organization's saved
 * key (the one saved for `keyName`, by default the call's provider), the server's environment; and the
 * lane of that account, with the saved key's limits or the server's (a request's own key has none).
 */
export async function resolveCredentials(
  deps: CredentialDeps,
  call: Pick<CompletionJob, 'organization_id' | 'request' | 'provider_api_key' | 'lane'>,
  keyName?: string,
) {
  const fromRequest = requestKey(deps, call.provider_api_key);
  // A call that waited in the lane of its provider's server key is made with that key, without asking
  // again (a route's other targets, which may name a saved key, are looked up as ever).
  const inServerLane = call.lane?.key === 'server' && call.lane.provider === call.request.provider && !keyName;
  const lookUp = !fromRequest && !inServerLane;
  const saved = lookUp ? await savedKey(deps, call.organization_id, keyName ?? call.request.provider) : null;
  // A key named on purpose (a route's target) is never silently replaced by the server's own.
  if (keyName && !fromRequest && !saved)
    throw new ProviderError(`no saved provider key '${keyName}': save it with POST /api/svc/v1/provider-keys`, false);
  const provider = call.request.provider;
  const resolved = resolveProvider(provider, { requestKey: fromRequest, saved, env: deps.env });
  const limits = saved?.limits ?? (fromRequest ? NO_LIMITS : envLimits(deps.env, provider));
  const key = fromRequest ? 'request' : saved ? 'saved' : 'server';
  return { ...resolved, lane: laneOf(provider, key, resolved, limits) };
}

const NO_LIMITS = { max_concurrent: null, rpm: null, tpm: null };

function requestKey(deps: CredentialDeps, key: CompletionJob['provider_api_key']): string | null {
  if (!key) return null;
  if ('plain' in key) return key.plain;
  if (!deps.secretsKey) throw new Error('this worker has no SECRETS_KEY to open the sealed provider key');
  return unseal(deps.secretsKey, key.sealed);
}

// A key saved or deleted a moment ago is honoured: the cache hears of every change (see saved-keys.ts).
async function savedKey(deps: CredentialDeps, org: string, provider: string) {
  const row = await deps.savedKeys.find(org, provider);
  if (!row || !deps.secretsKey) return null;
  // Checked again on every call, not only when saved: a name can be pointed at another address since.
  // Names are checked on the addresses the connection is made to; literals here.
  const guarded = row.base_url && !deps.allowPrivateUrls;
  const refused = guarded ? nonPublicLiteral(row.base_url!) : null;
  if (refused) throw new ProviderError(nonPublicMessage(refused), false);
  return {
    apiKey: unseal(deps.secretsKey, row.sealed_key),
    baseURL: row.base_url,
    fetch: guarded ? publicOnlyFetch : undefined,
    limits: { max_concurrent: row.max_concurrent, rpm: row.rpm, tpm: row.tpm },
  };
}
