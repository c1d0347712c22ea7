import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { cacheDigest } from '@sightline/llm';
import type { RedisKeys } from '@sightline/queues';
import { LlmResultSchema, type CompletionJob, type LlmResult } from '@sightline/schemas';
import { resolveCredentials, type CredentialDeps } from './credentials';

export type ProviderCallDeps = CredentialDeps & {
  redis: Redis;
  keys: RedisKeys;
  timeoutMs: number;
  maxRetries: number;
  cacheTtlSeconds: number;
};

/** How a call went: its result or its error, never both; the timings are in seconds. */
export type Outcome = {
  result: LlmResult | null;
  error: string | null;
  cacheHit: boolean;
  latency: number;
  timeToFirstToken: number | null;
};

export type ProviderCall = Omit<CompletionJob, 'reply_to' | 'log'>;

/**
 * Answers from the completion cache when allowed, else calls the provider once (its SDK retries transient
 * failures inside the call) and keeps the answer in the cache. A failure is an outcome, not a throw.
 */
export async function callProvider(
  deps: ProviderCallDeps,
  call: ProviderCall,
  onChunk: ((text: string) => void) | undefined,
  log: Logger,
): Promise<Outcome> {
  const req = call.request;
  const cacheKey = call.cache
    ? deps.keys.completionCache(call.organization_id, cacheDigest(call.organization_id, req))
    : null;
  const outcome: Outcome = { result: null, error: null, cacheHit: false, latency: 0, timeToFirstToken: null };
  try {
    outcome.result = await cached(deps.redis, cacheKey);
    if (outcome.result) {
      outcome.cacheHit = true;
      if (onChunk && outcome.result.content) onChunk(outcome.result.content);
      return outcome;
    }
    const provider = await resolveCredentials(deps, call);
    const t0 = performance.now();
    try {
      outcome.result = await provider.adapter.call(req, {
        apiKey: provider.apiKey,
        baseURL: provider.baseURL,
        fetch: provider.fetch,
        timeoutMs: deps.timeoutMs,
        maxRetries: deps.maxRetries,
        onDelta: onChunk
          ? (text) => {
              outcome.timeToFirstToken ??= (performance.now() - t0) / 1000;
              onChunk(text);
            }
          : undefined,
      });
    } finally {
      outcome.latency = (performance.now() - t0) / 1000;
    }
  } catch (err) {
    outcome.error = (err as Error).message;
    log.warn(
      { traceId: call.trace_id, provider: req.provider, model: req.model, err: outcome.error },
      'completion failed',
    );
    return outcome;
  }
  // A paid answer stays an answer even when the cache cannot keep it.
  if (cacheKey) {
    await deps.redis
      .set(cacheKey, JSON.stringify(outcome.result), 'EX', deps.cacheTtlSeconds)
      .catch((err) => log.warn({ err: err.message }, 'completion cache write failed'));
  }
  return outcome;
}

async function cached(redis: Redis, cacheKey: string | null): Promise<LlmResult | null> {
  const text = cacheKey ? await redis.get(cacheKey) : null;
  const parsed = text ? LlmResultSchema.safeParse(JSON.parse(text)) : null;
  return parsed?.success ? parsed.data : null;
}
