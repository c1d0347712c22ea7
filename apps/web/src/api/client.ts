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
  /** A call made before there is a session (signing in, an invitation): its 401 is the page's to show. */
  signingIn?: boolean;
  signal?: AbortSignal;
};

/**
 * What every request of the console carries: the session cookie (sent by the browser; the console holds
 * no key), and the header a page of another site cannot send, which the API asks of every cookie's write.
 */
function requestInit(method: string, body: unknown, signal?: AbortSignal): RequestInit {
  return {
    method,
    signal,
    credentials: 'same-origin',
    headers: { 'x-sightline-csrf': '1', ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/**
 * Every call of the console: JSON in and out, with the session cookie. A 401 means the session has ended
 * (signed out elsewhere, expired, removed by an admin): it ends here too, with a message, wherever it
 * happened.
 */
export async function api<T>(path: string, { method = 'GET', body, signingIn, signal }: Options = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${API_BASE}${path}`, requestInit(method, body, signal));
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'The Sightline server cannot be reached. Check that it is running, then retry.');
  }
  const text = await res.text();
  const json = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const detail = (json as { detail?: unknown } | undefined)?.detail ?? (text || res.statusText);
    if (res.status === 401 && !signingIn) session.refused(describeDetail(401, detail));
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

/** Saves what a GET answers as a file, under the name given. */
export async function download(path: string, filename: string): Promise<void> {
  const res = await fetch(`${API_BASE}${path}`, requestInit('GET', undefined));
  if (!res.ok) throw new ApiError(res.status, (await res.text()) || res.statusText);
  saveFile(await res.blob(), filename);
}

function saveFile(blob: Blob, filename: string) {
  const url = URL.createObjectURL(blob);
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  URL.revokeObjectURL(url);
}

/**
 * Saves what a POST answers as a file, read as it streams in (`onBytes` is told the bytes so far), under the name
 * the server gives. A connection cut part way is an error: the file is then not saved, never saved incomplete.
 */
export async function downloadPost(
  path: string,
  body: unknown,
  { signal, onBytes }: { signal: AbortSignal; onBytes: (bytes: number) => void },
): Promise<{ filename: string; bytes: number }> {
  const res = await fetch(`${API_BASE}${path}`, requestInit('POST', body, signal));
  if (!res.ok || !res.body) {
    const text = await res.text();
    throw new ApiError(res.status, (safeJson(text) as { detail?: unknown } | undefined)?.detail ?? text);
  }
  const parts: Uint8Array[] = [];
  let bytes = 0;
  // Cancelled by the reader, whatever the fetch does with an abort once its answer has begun.
  const reader = res.body.getReader();
  signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (signal.aborted) throw new DOMException('the download was cancelled', 'AbortError');
    if (done) break;
    parts.push(value);
    onBytes((bytes += value.length));
  }
  const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export';
  saveFile(new Blob(parts as BlobPart[]), filename);
  return { filename, bytes };
}

/**
 * POSTs to a Server-Sent Events route and hands each event's JSON to `onEvent`, as it arrives. A refusal
 * before the stream starts is thrown as the ApiError of an ordinary call.
 */
export async function postStream(path: string, body: unknown, onEvent: (data: unknown) => void, signal?: AbortSignal) {
  const res = await fetch(`${API_BASE}${path}`, requestInit('POST', body, signal));
  if (!res.ok || !res.body) {
    const text = await res.text();
    throw new ApiError(res.status, (safeJson(text) as { detail?: unknown } | undefined)?.detail ?? text);
  }
  const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const event of events as unknown as AsyncIterable<{ data: string }>) onEvent(JSON.parse(event.data));
}
