import { anthropicAdapter } from './anthropic';
import { openAiAdapter } from './openai';
import { ProviderError, type ProviderAdapter } from './types';

export * from './types';
export * from './overload';

type Known = {
  protocol: 'openai' | 'anthropic' | 'azure';
  baseURL?: string;
  keyOptional?: boolean;
};

// Providers Sightline knows by name. Any other name works as an OpenAI-compatible server once a base URL
// is configured for it (a saved provider key's base_url, or <NAME>_BASE_URL in the environment).
const KNOWN: Record<string, Known> = {
  openai: { protocol: 'openai' },
  anthropic: { protocol: 'anthropic' },
  azure: { protocol: 'azure' },
  groq: { protocol: 'openai', baseURL: 'https://api.groq.com/openai/v1' },
  together: { protocol: 'openai', baseURL: 'https://api.together.xyz/v1' },
  mistral: { protocol: 'openai', baseURL: 'https://api.mistral.ai/v1' },
  openrouter: { protocol: 'openai', baseURL: 'https://openrouter.ai/api/v1' },
  deepseek: { protocol: 'openai', baseURL: 'https://api.deepseek.com/v1' },
  fireworks: { protocol: 'openai', baseURL: 'https://api.fireworks.ai/inference/v1' },
  ollama: { protocol: 'openai', baseURL: 'http://127.0.0.1:11434/v1', keyOptional: true },
  vllm: { protocol: 'openai', keyOptional: true },
};

/** The prefix of a provider's environment variables: OPENAI for `OPENAI_API_KEY`, `OPENAI_RPM`, ... */
export const providerEnvName = (provider: string) =>
  provider === 'azure' ? 'AZURE_OPENAI' : provider.toUpperCase().replace(/[^A-Z0-9]/g, '_');

export type ResolvedProvider = { adapter: ProviderAdapter; apiKey: string; baseURL?: string; fetch?: typeof fetch };
/** `saved.fetch` goes with the saved base URL: the one to reach it with (see base-url.ts). */
export type KeySources = {
  requestKey?: string | null;
  saved?: { apiKey: string; baseURL?: string | null; fetch?: typeof fetch } | null;
  env: NodeJS.ProcessEnv;
};

/** The adapter, key and base URL for a provider. Keys: the request's, then the organization's saved key, then the environment. */
export function resolveProvider(provider: string, { requestKey, saved, env }: KeySources): ResolvedProvider {
  const known = Object.hasOwn(KNOWN, provider) ? KNOWN[provider] : undefined;
  const prefix = providerEnvName(provider);
  const baseURL = saved?.baseURL ?? env[`${prefix}_BASE_URL`] ?? known?.baseURL;
  if (!known && !baseURL) {
    throw new ProviderError(
      `unknown provider '${provider}': save a key with a base_url for it, or set ${prefix}_BASE_URL`,
      false,
    );
  }
  const apiKey =
    requestKey ?? saved?.apiKey ?? env[`${prefix}_API_KEY`] ?? (known?.keyOptional || !known ? 'none' : undefined);
  if (!apiKey) {
    throw new ProviderError(
      `no API key for provider '${provider}': send provider_api_key, save one with POST /api/svc/v1/provider-keys, or set ${prefix}_API_KEY on the server`,
      false,
    );
  }
  const protocol = known?.protocol ?? 'openai';
  // Without its own base URL an OpenAI-compatible provider would reach OpenAI with this key.
  if (provider !== 'openai' && protocol !== 'anthropic' && !baseURL) {
    throw new ProviderError(
      `no base URL for provider '${provider}': save a key with a base_url for it, or set ${prefix}_BASE_URL`,
      false,
    );
  }
  const adapter =
    protocol === 'anthropic'
      ? anthropicAdapter()
      : openAiAdapter(protocol, provider, protocol === 'azure' ? env.AZURE_OPENAI_API_VERSION : undefined);
  return { adapter, apiKey, baseURL, ...(saved?.baseURL && { fetch: saved.fetch }) };
}
