import { LRUCache } from 'lru-cache';
import type { CallOptions } from './types';
// SDK clients are kept and reused: building one per call (its options, headers and resource tree) is CPU
// on every completion's path, and a client holds nothing but its options. Connections are pooled by Node's
// fetch per origin either way, so reuse changes no behaviour: each call brings its own abort
// signal, and the options that differ between calls (key, base URL, timeout, retries) are the cache key.
const MAX_CLIENTS = 256;

/** A cache of SDK clients; the least recently used goes past MAX_CLIENTS (keys rotate). */
export const clientCache = <C extends object>() => new LRUCache<string, C>({ max: MAX_CLIENTS });

/**
 * Providers answer where they are asked; a redirect is refused rather than followed, so that a base URL
 * that passed the public-address check (base-url.ts) cannot bounce the call to an internal address.
 */
const NO_REDIRECTS = { redirect: 'error' } as const;

const fetchIds = new WeakMap<typeof fetch, number>();
let lastFetchId = 0;
/** A client's fetch as part of its cache key: 0 for the global one, a number of its own for each other. */
function fetchId(custom: typeof fetch | undefined): number {
  if (!custom) return 0;
  if (!fetchIds.has(custom)) fetchIds.set(custom, ++lastFetchId);
  return fetchIds.get(custom)!;
}

/** The client made for these options, made once while it stays in the cache. */
export function reuseClient<C extends object>(
  cache: LRUCache<string, C>,
  options: readonly unknown[],
  make: () => C,
): C {
  const key = JSON.stringify(options);
  let client = cache.get(key);
  if (!client) cache.set(key, (client = make()));
  return client;
}

/**
 * `base`, with a response body that stops when the call's signal aborts. Node 20's fetch (undici 6) follows
 * the caller's signal through a weak reference, which a garbage collection drops once the response headers
 * are in (nodejs/node#55428, fixed only in undici 8, which needs Node 22): a provider that stalled after its
 * headers then held the call, its worker slot and its lane past every deadline. The body is read through a
 * stream of our own that the signal errors, which errors the SDK's read, and cancels undici's body (closing the
 * socket). One stream a call: piping through a TransformStream (three streams and a pipe) took about a tenth of
 * the worker's CPU a completion, this about 6 % (docs/benchmarks-notes.md, issue 39, 2026-12-06).
 */
function bodyFollowsSignal(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const signal = init?.signal;
    if (!signal || !res.body) return res;
    const reader = res.body.getReader();
    let stop: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stop = () => {
          controller.error(signal.reason);
          reader.cancel(signal.reason).catch(() => {});
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (signal.aborted) return;
        if (done) {
          signal.removeEventListener('abort', stop!);
          controller.close();
        } else controller.enqueue(value);
      },
      cancel(reason) {
        signal.removeEventListener('abort', stop!);
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** What every SDK client is built with from a call's options. */
export const sdkOptions = (opts: CallOptions) => ({
  apiKey: opts.apiKey,
  baseURL: opts.baseURL,
  timeout: opts.timeoutMs,
  maxRetries: opts.maxRetries,
  fetchOptions: NO_REDIRECTS,
  fetch: bodyFollowsSignal(opts.fetch ?? globalThis.fetch),
});

/** The parts of a call's options that tell its client apart, with any of the provider's own. */
export const clientKey = (opts: CallOptions, ...own: unknown[]) => [
  opts.apiKey,
  opts.baseURL ?? null,
  opts.timeoutMs,
  opts.maxRetries,
  fetchId(opts.fetch),
  ...own,
];
