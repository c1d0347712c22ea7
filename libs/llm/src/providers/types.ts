import type { LlmResult } from '@sightline/schemas';
import type { LlmRequest } from '../request';
import { retryAfterMsOf } from './overload';

export type { LlmResult };

export type CallOptions = {
  apiKey: string;
  baseURL?: string;
  /** Per attempt; the SDK retries 429, 5xx, timeouts and refused connections with backoff. */
  timeoutMs: number;
  maxRetries: number;
  /** The whole call's budget, retries included; default: what `timeoutMs` and `maxRetries` allow. */
  budgetMs?: number;
  /** The fetch the SDK calls the provider with; default: the global one. */
  fetch?: typeof fetch;
  /** Streams the call when given: receives each text delta in the order the provider sent it. */
  onDelta?: (text: string) => void;
};

export interface ProviderAdapter {
  call(request: LlmRequest, options: CallOptions): Promise<LlmResult>;
}

/**
 * A failed provider call; `retryable` says whether the same call could succeed later (429, 5xx, timeouts),
 * and `retryAfterMs` when the provider said (Retry-After).
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The most a call may take with every retry: each attempt may use the whole timeout, plus the SDK's backoff. */
export function callBudgetMs(timeoutMs: number, maxRetries: number): number {
  return timeoutMs * (maxRetries + 1) + 10_000 * maxRetries;
}

/**
 * An abort signal for one call: fires when the whole budget is spent, or when a stream has sent nothing
 * for a full attempt's timeout (the SDK's own timeout stops at the response headers).
 */
export function callDeadline(options: CallOptions) {
  const controller = new AbortController();
  const total = setTimeout(
    () => controller.abort(new ProviderError('timed out: the call took longer than its budget', true)),
    options.budgetMs ?? callBudgetMs(options.timeoutMs, options.maxRetries),
  );
  let idle: NodeJS.Timeout | undefined;
  const stalled = () =>
    controller.abort(new ProviderError(`timed out: the stream sent nothing for ${options.timeoutMs} ms`, true));
  return {
    signal: controller.signal,
    /** Call on every streamed event. */
    alive() {
      clearTimeout(idle);
      idle = setTimeout(stalled, options.timeoutMs);
    },
    done() {
      clearTimeout(total);
      clearTimeout(idle);
    },
  };
}

export function toProviderError(err: unknown, provider: string, signal?: AbortSignal): ProviderError {
  if (signal?.aborted && signal.reason instanceof ProviderError)
    return new ProviderError(`${provider} error (${signal.reason.message})`, true);
  if (err instanceof ProviderError) return err;
  const e = err as { status?: number; message?: string; name?: string; headers?: unknown };
  const status = typeof e.status === 'number' ? e.status : undefined;
  if (status !== undefined) {
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const headers = e.headers instanceof Headers ? e.headers : undefined;
    return new ProviderError(
      `${provider} error (HTTP ${status}): ${e.message}`,
      retryable,
      status,
      retryAfterMsOf(headers),
    );
  }
  const reason =
    e.name === 'APIConnectionTimeoutError'
      ? 'timeout'
      : e.name === 'APIConnectionError'
        ? 'connection failed'
        : 'failed';
  return new ProviderError(`${provider} error (${reason}): ${e.message ?? String(err)}`, reason !== 'failed');
}
