import { createHash } from 'node:crypto';
import type { ProviderLimits } from '@sightline/db';
import { providerEnvName } from '@sightline/llm';
import type { Lane } from '@sightline/schemas';

// A lane: the provider account a call goes to (named by a digest, never by its key), and the limits
// configured for it: a saved key's, or the server's environment variables. How calls keep to those limits
// is lane-scheduler.ts's.

/** The environment variables of a server-wide provider's limits, by suffix: OPENAI_MAX_CONCURRENT, ... */
const LIMIT_SUFFIXES = { max_concurrent: 'MAX_CONCURRENT', rpm: 'RPM', tpm: 'TPM' } as const;
const LIMIT_VARIABLE = /_(MAX_CONCURRENT|RPM|TPM)$/;

/** Throws, naming each, when a limit variable (`<PROVIDER>_MAX_CONCURRENT`, `_RPM`, `_TPM`) is not a positive integer. */
export function checkLimitVariables(env: NodeJS.ProcessEnv): void {
  const bad = Object.entries(env).filter(
    ([name, value]) => LIMIT_VARIABLE.test(name) && value !== '' && !/^[1-9]\d{0,8}$/.test(value ?? ''),
  );
  if (bad.length)
    throw new Error(`Invalid environment:\n${bad.map(([name]) => `  ${name}: must be a positive integer`).join('\n')}`);
}

/** A server-wide provider's limits, from its environment variables (checked at start-up). */
export function envLimits(env: NodeJS.ProcessEnv, provider: string): ProviderLimits {
  const prefix = providerEnvName(provider);
  const read = (suffix: string) => (env[`${prefix}_${suffix}`] ? Number(env[`${prefix}_${suffix}`]) : null);
  return {
    max_concurrent: read(LIMIT_SUFFIXES.max_concurrent),
    rpm: read(LIMIT_SUFFIXES.rpm),
    tpm: read(LIMIT_SUFFIXES.tpm),
  };
}

/**
 * The lane of a provider account: the provider and a digest of its key and base URL, so that two
 * organizations that saved the same key share one account's limits, and no key is ever written out.
 */
export function laneOf(
  provider: string,
  source: Lane['key'],
  key: { apiKey: string; baseURL?: string | null },
  limits: ProviderLimits,
): Lane {
  const digest = createHash('sha256')
    .update(`${provider}\0${key.baseURL ?? ''}\0${key.apiKey}`)
    .digest('hex');
  const name = provider
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, 40);
  return { id: `${name}-${digest.slice(0, 20)}`, provider, key: source, ...limits };
}

/** Whether a lane has a limit the gateway keeps to. */
export const isLimited = (lane: Lane) => lane.max_concurrent !== null || lane.rpm !== null || lane.tpm !== null;
