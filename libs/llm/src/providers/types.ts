import type { LlmRequest } from '../request';

export type CallOptions = {
  apiKey: string;
  baseURL?: string;
  /** Per attempt; the SDK retries 429, 5xx, timeouts and refused connections with backoff. */
  timeoutMs: number;
  maxRetries: number;
  /** Streams the call when given: receives each text delta in the order the provider sent it. */
  onDelta?: (text: string) => void;
};

export type LlmResult = {
  content: string;
  model: string;
  /** Null when the provider reported no usage. */
  input_tokens: number | null;
  output_tokens: number | null;
};

export interface ProviderAdapter {
  call(request: LlmRequest, options: CallOptions): Promise<LlmResult>;
}

/** A failed provider call; `retryable` says whether the same call could succeed later (429, 5xx, timeouts). */
export class ProviderError extends Error {
  constructor(message: string, readonly retryable: boolean, readonly status?: number) {
    super(message);
  }
}

export function toProviderError(err: unknown, provider: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = err as { status?: number; message?: string; name?: string };
  const status = typeof e.status === 'number' ? e.status : undefined;
  const retryable = status === undefined ? true : status === 408 || status === 409 || status === 429 || status >= 500;
  const reason = status ? `HTTP ${status}` : e.name === 'APIConnectionTimeoutError' ? 'timeout' : 'connection failed';
  return new ProviderError(`${provider} error (${reason}): ${e.message ?? String(err)}`, retryable, status);
}
