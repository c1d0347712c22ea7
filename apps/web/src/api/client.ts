import { EventSourceParserStream } from 'eventsource-parser/stream';
import { session } from './session';

export const API_BASE = '/api/svc/v1';

/** An API answer other than 2xx, with the `detail` the API gives (a text, or 422's list of problems). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(describeDetail(status, detail));
    this.name = 'ApiError';
  }
}

function describeDetail(status: number, detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) =>
        `${(d.loc ?? []).filter((l) => l !== 'body').join('.')}: ${d.msg ?? ''}`.replace(/^: /, ''),
      )
      .join('; ');
  }
  return `the server answered ${status}`;
}

type Options = {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  apiKey?: string;
  signal?: AbortSignal;
};

/**
 * Every call of the console: JSON in and out, the session's key in `x-api-key`. A 401 means the key no
 * longer works (revoked, or another server): the session ends with a message, wherever it happened.
 */
export async function api<T>(path: string, { method = 'GET', body, apiKey, signal }: Options = {}): Promise<T> {
  const key = apiKey ?? session.get().apiKey;
  let res: Response;
  try {
    res = await fetch(`${API_BASE}${path}`, {
      method,
      signal,
      headers: { ...(key && { 'x-api-key': key }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'The Sightline server cannot be reached. Check that it is running, then retry.');
  }
  const text = await res.text();
  const json = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const detail = (json as { detail?: unknown } | undefined)?.detail ?? (text || res.statusText);
    // A key being tried on the sign-in page is not a session yet: its 401 is the page's to show.
    if (res.status === 401 && !apiKey)
      session.signOut(`You were signed out: ${describeDetail(401, detail)}. Sign in with a valid API key.`);
    throw new ApiError(res.status, detail);
  }
  return json as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The message to show for a failed query or mutation. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 403) return `${err.message}`;
    if (err.status === 404) return `Not found: ${err.message}`;
    if (err.status >= 500)
      return `The server could not answer (${err.status}): ${err.message}. Retry in a moment; if it persists, check the server's logs.`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Saves what a GET answers as a file: a plain link could not send the key. */
export async function download(path: string, filename: string): Promise<void> {
  const key = session.get().apiKey;
  const res = await fetch(`${API_BASE}${path}`, { headers: key ? { 'x-api-key': key } : {} });
  if (!res.ok) throw new ApiError(res.status, (await res.text()) || res.statusText);
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  URL.revokeObjectURL(url);
}

/**
 * POSTs to a Server-Sent Events route and hands each event's JSON to `onEvent`, as it arrives. A refusal
 * before the stream starts is thrown as the ApiError of an ordinary call.
 */
export async function postStream(path: string, body: unknown, onEvent: (data: unknown) => void, signal?: AbortSignal) {
  const key = session.get().apiKey;
  const res = await fetch(`${API_BASE}${path}`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', ...(key && { 'x-api-key': key }) },
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body) {
    const text = await res.text();
    throw new ApiError(res.status, (safeJson(text) as { detail?: unknown } | undefined)?.detail ?? text);
  }
  const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const event of events as unknown as AsyncIterable<{ data: string }>) onEvent(JSON.parse(event.data));
}
