/** The statuses by which a provider says it is at its limit or overloaded: rate limited, unavailable, Anthropic's 529. */
export const OVERLOAD_STATUSES: ReadonlySet<number> = new Set([429, 503, 529]);

/** Retry-After as milliseconds: `retry-after-ms` (OpenAI, Anthropic), else seconds or an HTTP date. */
export function retryAfterMsOf(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const wrapped = new WeakMap<typeof fetch, typeof fetch>();

/**
 * The fetch for calls whose overloads the gateway handles itself (pausing the provider and queueing the
 * call again): an overload answer tells the SDK not to retry (`x-should-retry: false`, which the OpenAI
 * and Anthropic SDKs obey), so it reaches the gateway at once; the SDK still retries other failures. One
 * wrapper per fetch, so that SDK clients built with it are reused.
 */
export function withoutOverloadRetries(base: typeof fetch = globalThis.fetch): typeof fetch {
  let own = wrapped.get(base);
  if (!own) {
    own = async (input, init) => {
      const res = await base(input, init);
      if (!OVERLOAD_STATUSES.has(res.status)) return res;
      const headers = new Headers(res.headers);
      headers.set('x-should-retry', 'false');
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
    };
    wrapped.set(base, own);
  }
  return own;
}
