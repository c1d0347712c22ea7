// The load generator: autocannon, in this process. Each request can carry a freshly made body.
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import autocannon from 'autocannon';

export type LoadOptions = {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  connections: number;
  durationSec: number;
  /** Requests per second over all connections; unset means as fast as the server answers. */
  rate?: number;
  body?: () => string | Buffer;
  /** Called with every response's status and body (as text). */
  onResponse?: (status: number, body: string) => void;
  /**
   * Keeps the latency of every 2xx response, in ms with sub-millisecond precision, in `latencies`
   * (autocannon's own percentiles come from a histogram of whole milliseconds).
   */
  keepLatencies?: boolean;
};

export type LoadResult = {
  requests: number;
  ok: number;
  okPerSec: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  latencies?: number[];
};

export async function load(options: LoadOptions): Promise<LoadResult> {
  const { body: makeBody, onResponse } = options;
  const latencies: number[] | undefined = options.keepLatencies ? [] : undefined;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'POST',
        headers: options.headers,
        connections: options.connections,
        duration: options.durationSec,
        timeout: 30,
        ...(options.rate && { overallRate: options.rate }),
        ...((makeBody || onResponse) && {
          requests: [
            {
              ...(makeBody && { setupRequest: (req: autocannon.Request) => ({ ...req, body: makeBody() }) }),
              ...(onResponse && { onResponse }),
            },
          ],
        }),
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    if (latencies)
      instance.on(
        'response',
        (_client, statusCode, _bytes, responseTime) =>
          void (statusCode >= 200 && statusCode < 300 && latencies.push(responseTime)),
      );
  });
  const ok = result['2xx'];
  return {
    requests: result.requests.total,
    ok,
    okPerSec: ok / options.durationSec,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    ...(latencies && { latencies }),
  };
}

export type TimedRequest = {
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
};

/**
 * Latencies (ms) of `count` requests sent one after another, each timed from send to the last byte of the
 * body, decompressed, after `warmup` untimed ones. Sequential on purpose: it measures the service time of one
 * request, not queueing. Any answer other than 200 throws, so that an error page is never timed as a result.
 *
 * The client accepts brotli and gzip, as a browser does, and inflates the body in one native call, as a
 * browser does off its page's thread. Node's fetch inflates through web streams in JavaScript: on a 14 MB
 * trace log it took 390 ms where the answer itself took 190 (184 uncompressed, 266 inflated in one call).
 */
export async function timeSequential(request: TimedRequest, count: number, warmup = 0): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const t0 = performance.now();
    const status = await send(request);
    const ms = performance.now() - t0;
    if (status !== 200) throw new Error(`${request.method ?? 'GET'} ${request.url} answered ${status}`);
    if (i >= warmup) latencies.push(ms);
  }
  return latencies;
}

const INFLATE: Record<string, (body: Buffer) => Buffer> = { br: brotliDecompressSync, gzip: gunzipSync };

/** Sends one request; resolves with its status once the whole body is read and inflated. */
function send({ url, method = 'GET', headers, body }: TimedRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { 'accept-encoding': 'br, gzip', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        try {
          INFLATE[res.headers['content-encoding'] ?? '']?.(Buffer.concat(chunks));
          resolve(res.statusCode!);
        } catch (err) {
          reject(err as Error);
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends a request in a loop, pausing `pauseMs` between them and recording each latency, until stopped. */
export function probe(request: TimedRequest, pauseMs = 10) {
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      latencies.push(...(await timeSequential(request, 1)));
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  })();
  return { latencies, stop: async () => ((running = false), await done, latencies) };
}
