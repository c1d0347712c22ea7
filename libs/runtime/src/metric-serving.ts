// The metrics as served: the worker's bare `GET /metrics` server, and the text a scrape gets, one process's or,
// under `npm start`'s cluster, every API process's together. Apart because only entry points start these.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { metrics } from './metric-definitions';

/** A bare HTTP server answering `GET /metrics` with this process's metrics (the worker has no Fastify). */
export function serveMetrics(port: number, log: Logger): { listening: Promise<number>; close(): Promise<void> } {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    metrics.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (err: Error) => {
        log.error({ err }, 'metrics collection failed');
        res.writeHead(500).end();
      },
    );
  });
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve((server.address() as AddressInfo).port));
  });
  listening.then(
    (bound) => log.info({ port: bound }, 'metrics served at /metrics'),
    (err: Error) => log.error({ err: err.message, port }, 'metrics server could not listen'),
  );
  return {
    listening,
    close: () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())),
  };
}

// ---------------------------------------------------------------------------------------------------------
// API processes in a cluster (`npm start` with API_PROCESSES > 1) share one port, so a scrape lands on any
// one of them. That one asks the primary, which gathers every API process's registry with prom-client's
// AggregatorRegistry (counters and histograms summed; the gauges read from Redis taken once) and answers.

const CLUSTER_METRICS = 'sightline:cluster-metrics';
type ClusterMetricsMessage = { type: typeof CLUSTER_METRICS; id: number; text?: string; error?: string };
const isClusterMetrics = (message: unknown): message is ClusterMetricsMessage =>
  (message as ClusterMetricsMessage | null)?.type === CLUSTER_METRICS;

/**
 * In the cluster's primary: answers its API processes' requests for everyone's metrics. prom-client's
 * gathering gives up after 5 s when an API process does not answer, and the asker hears why.
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isClusterMetrics(message)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: CLUSTER_METRICS, id: message.id, text }),
      (err: Error) => worker.send({ type: CLUSTER_METRICS, id: message.id, error: err.message }),
    );
  });
}

// Set by startClusterMetrics: this process serves the cluster's metrics, asked of the primary.
let fromPrimary = false;
const asked = new Map<number, { resolve(text: string): void; reject(err: Error): void }>();
let lastAsk = 0;

/** Settles the ask that the primary's answer names. */
function onPrimaryAnswer(message: unknown): void {
  if (!isClusterMetrics(message)) return;
  const ask = asked.get(message.id);
  asked.delete(message.id);
  if (message.text !== undefined) ask?.resolve(message.text);
  else ask?.reject(new Error(`cluster metrics: ${message.error}`));
}

/**
 * In an API process that `npm start` forked: answers the primary's requests for this process's metrics, and
 * has metricsText ask the primary for every API process's. Elsewhere it does nothing, so an entry point can
 * call it unconditionally: only under our own primary (`npm start` sets SIGHTLINE_METRICS_FROM_PRIMARY),
 * since another cluster manager would never answer. Call it before the process serves its first scrape.
 */
export function startClusterMetrics(): void {
  if (fromPrimary || !cluster.isWorker || process.env.SIGHTLINE_METRICS_FROM_PRIMARY !== '1') return;
  fromPrimary = true;
  AggregatorRegistry.setRegistries([metrics]);
  new AggregatorRegistry(); // installs prom-client's answer to the primary's requests
  process.on('message', onPrimaryAnswer);
}

/** Why a scrape has no metrics to serve: the cluster's primary did not answer. */
export class ClusterMetricsUnavailable extends Error {}

const PRIMARY_TIMEOUT_MS = 5000;

/**
 * The metrics to serve: this process's, or after startClusterMetrics in `npm start`'s cluster, every API
 * process's together. A primary that does not answer in time (busy, or gone) fails the scrape with
 * ClusterMetricsUnavailable rather than holding it: this process's figures alone would read as counters
 * reset to a fraction.
 */
export function metricsText(timeoutMs = PRIMARY_TIMEOUT_MS): Promise<string> {
  if (!fromPrimary) return metrics.metrics();
  const id = ++lastAsk;
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      asked.delete(id);
      clearTimeout(timer);
      reject(new ClusterMetricsUnavailable(`cluster metrics: ${why}`));
    };
    const timer = setTimeout(() => fail(`the primary did not answer within ${timeoutMs} ms`), timeoutMs);
    asked.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (err) => (clearTimeout(timer), reject(err)),
    });
    process.send!({ type: CLUSTER_METRICS, id }, undefined, {}, (err) => err && fail(err.message));
  });
}
