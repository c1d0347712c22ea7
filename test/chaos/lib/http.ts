import { Agent, request } from 'node:http';

export type Outcome =
  | { kind: 'response'; status: number; body: string; sentAt: number; doneAt: number }
  | { kind: 'error'; code: string; sentAt: number; doneAt: number };

/** Keep-alive connections, as a client library holds them. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One HTTP request whose failure is told apart precisely: a response (any status), a refused
 * connection, or a connection cut (reset) with no response. `agent: false` opens a connection of its
 * own for the request, so a cut connection can only be this request's.
 */
function send(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    agent?: Agent | false;
    timeoutMs?: number;
  } = {},
): Promise<Outcome> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: { ...(options.body !== undefined && { 'content-type': 'application/json' }), ...options.headers },
        agent: options.agent ?? keepAlive,
        timeout: options.timeoutMs ?? 120_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          resolve({ kind: 'response', status: res.statusCode ?? 0, body, sentAt, doneAt: Date.now() }),
        );
        res.on('error', (err: NodeJS.ErrnoException) =>
          resolve({ kind: 'error', code: err.code ?? err.message, sentAt, doneAt: Date.now() }),
        );
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ kind: 'error', code: err.code ?? err.message, sentAt, doneAt: Date.now() }),
    );
    req.end(options.body);
  });
}

/** A Sightline API at `base`, called with an API key. */
export function apiClient(base: string, key: string, agent: Agent | false = keepAlive) {
  const headers = { 'x-api-key': key };
  return {
    base,
    post: (path: string, body: unknown, options: { timeoutMs?: number; requestId?: string } = {}) =>
      send(`${base}/api/svc/v1${path}`, {
        method: 'POST',
        headers: { ...headers, ...(options.requestId && { 'x-request-id': options.requestId }) },
        body: JSON.stringify(body),
        agent,
        timeoutMs: options.timeoutMs,
      }),
    put: (path: string, body: unknown) =>
      send(`${base}/api/svc/v1${path}`, { method: 'PUT', headers, body: JSON.stringify(body), agent }),
    get: (path: string) => send(`${base}/api/svc/v1${path}`, { headers, agent }),
    // As docker-compose.yml's health check: an answer slower than 3 s counts as a failure.
    readyz: () => send(`${base}/readyz`, { agent, timeoutMs: 3000 }),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;

/**
 * A caller of the API at `base` with the key: answers the parsed body of a 2xx, and throws naming the
 * request and the answer otherwise (a chaos test's own requests, made while nothing is failing).
 */
export function apiCaller(base: string, key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}/api/svc/v1${path}`, {
      method,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
}
