import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { cacheDigest, OVERLOAD_STATUSES, ProviderError, withoutOverloadRetries } from '@sightline/llm';
import type { RedisKeys } from '@sightline/queues';
import { providerCallsInFlight, providerOverloads } from '@sightline/runtime';
import {
  LlmResultSchema,
  type CompletionJob,
  type Lane,
  type LlmRequest,
  type LlmResult,
  type RetryOn,
} from '@sightline/schemas';
import type { CallsInFlight } from './calls-in-flight';
import { resolveCredentials, type CredentialDeps } from './credentials';

export type ProviderCallDeps = CredentialDeps & {
  redis: Redis;
  keys: RedisKeys;
  /** The calls this process is making, by lane: counted around each call. */
  callsInFlight: CallsInFlight;
  timeoutMs: number;
  maxRetries: number;
  cacheTtlSeconds: number;
};

/** How a call went: its result or its error, never both; the timings are in seconds. */
export type Outcome = {
  result: LlmResult | null;
  error: string | null;
  /** The kind of failure, where a route may try its next target on it (see RETRY_ON). */
  failure: RetryOn | null;
  cacheHit: boolean;
  latency: number;
  timeToFirstToken: number | null;
  /** The provider account called (or that would have been), once its key is known. */
  lane: Lane | null;
  /** Not called: the lane is at its limit or paused, and the call waits its turn (for `waitMs`, when known). */
  deferred: { waitMs: number | null } | null;
  /** The provider refused the call for overload (429, 503, 529) before any output: it may be tried again. */
  overload: { retryAfterMs: number | null } | null;
};

export type ProviderCall = Omit<CompletionJob, 'reply_to' | 'log'>;

/**
 * Whether a call may go to its provider now, or must wait in its lane's queue (for `waitMs`, when known).
 * A call admitted on an estimate of its tokens (tokens a minute) has `settle`, to put the tokens the
 * provider reports in the estimate's place once the call is done (null: not known, the estimate stands).
 */
export type Admission = { go: true; settle?: Settle } | { go: false; waitMs: number | null };
type Settle = (usedTokens: number | null) => Promise<void>;

/**
 * A route's target overrides the server's retries and budget, and may name the saved key it uses. A
 * queued call is admitted by its lane (`admit`) and has its overloads handled by the queue, not the SDK.
 * `deadline` (epoch ms) bounds the call: its budget is what is left of it when the call starts, after its
 * key and its admission, which take time of their own on a loaded worker.
 */
export type CallOverrides = {
  maxRetries?: number;
  deadline?: number;
  keyName?: string;
  admit?: (lane: Lane, request: LlmRequest) => Promise<Admission>;
};

/**
 * A failure as a route's `retry_on` names it: rate limited (429), the provider failing (5xx, 529), or no
 * answer at all (a timeout, a stalled stream, a connection that failed). Other failures (a bad request,
 * a missing key) would fail on any target alike.
 */
export function failureOf(err: unknown): RetryOn | null {
  if (!(err instanceof ProviderError)) return null;
  if (err.status === 429) return '429';
  if (err.status !== undefined) return err.status >= 500 ? '5xx' : null;
  return err.retryable ? 'timeout' : null;
}

/** An outcome before anything happened: no result, no error. */
export function noOutcome(): Outcome {
  return {
    result: null,
    error: null,
    failure: null,
    cacheHit: false,
    latency: 0,
    timeToFirstToken: null,
    lane: null,
    deferred: null,
    overload: null,
  };
}

/**
 * Answers from the completion cache when allowed, else calls the provider once (its SDK retries transient
 * failures inside the call) and keeps the answer in the cache. A failure is an outcome, not a throw.
 */
export async function callProvider(
  deps: ProviderCallDeps,
  call: ProviderCall,
  onChunk: ((text: string) => void) | undefined,
  log: Logger,
  overrides: CallOverrides = {},
): Promise<Outcome> {
  const req = call.request;
  const cacheKey = call.cache
    ? deps.keys.completionCache(call.organization_id, cacheDigest(call.organization_id, req))
    : null;
  const outcome = noOutcome();
  let settle: Settle | undefined;
  try {
    outcome.result = await cached(deps.redis, cacheKey);
    if (outcome.result) {
      outcome.cacheHit = true;
      if (onChunk && outcome.result.content) onChunk(outcome.result.content);
      return outcome;
    }
    const provider = await resolveCredentials(deps, call, overrides.keyName);
    outcome.lane = provider.lane;
    const admission = overrides.admit ? await overrides.admit(provider.lane, req) : null;
    if (admission && !admission.go) {
      outcome.deferred = { waitMs: admission.waitMs };
      return outcome;
    }
    settle = admission?.settle;
    const t0 = performance.now();
    const lane = provider.lane.id;
    deps.callsInFlight.start(lane);
    providerCallsInFlight.inc({ provider: req.provider });
    try {
      outcome.result = await provider.adapter.call(req, {
        apiKey: provider.apiKey,
        baseURL: provider.baseURL,
        fetch: overrides.admit ? withoutOverloadRetries(provider.fetch) : provider.fetch,
        timeoutMs: deps.timeoutMs,
        maxRetries: overrides.maxRetries ?? deps.maxRetries,
        budgetMs: overrides.deadline === undefined ? undefined : Math.max(1, overrides.deadline - Date.now()),
        onDelta: onChunk
          ? (text) => {
              outcome.timeToFirstToken ??= (performance.now() - t0) / 1000;
              onChunk(text);
            }
          : undefined,
      });
    } finally {
      outcome.latency = (performance.now() - t0) / 1000;
      deps.callsInFlight.end(lane);
      providerCallsInFlight.dec({ provider: req.provider });
    }
    await settleTokens(settle, tokensUsed(outcome.result), log);
  } catch (err) {
    // Refused at the door (429, 503, 529) before any output, a call used no tokens; any other failure
    // may have been counted by its provider, so the estimate stands.
    await settleTokens(settle, isOverload(err) && outcome.timeToFirstToken === null ? 0 : null, log);
    outcome.error = (err as Error).message;
    outcome.failure = failureOf(err);
    if (isOverload(err)) {
      providerOverloads.inc({ provider: req.provider, status: String(err.status) });
      if (overrides.admit && outcome.timeToFirstToken === null)
        outcome.overload = { retryAfterMs: err.retryAfterMs ?? null };
    }
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

/** The tokens a call used as its provider reported them; null when it reported none. */
function tokensUsed(result: LlmResult | null): number | null {
  return result?.input_tokens == null || result.output_tokens == null
    ? null
    : result.input_tokens + result.output_tokens;
}

/** Puts the tokens a call used in place of its lane's estimate (see Admission); a failure is only logged. */
async function settleTokens(settle: Settle | undefined, used: number | null, log: Logger): Promise<void> {
  if (settle)
    await settle(used).catch((err: Error) => log.warn({ err: err.message }, 'could not count the tokens a call used'));
}

const isOverload = (err: unknown): err is ProviderError =>
  err instanceof ProviderError && err.status !== undefined && OVERLOAD_STATUSES.has(err.status);

async function cached(redis: Redis, cacheKey: string | null): Promise<LlmResult | null> {
  const text = cacheKey ? await redis.get(cacheKey) : null;
  const parsed = text ? LlmResultSchema.safeParse(JSON.parse(text)) : null;
  return parsed?.success ? parsed.data : null;
}
