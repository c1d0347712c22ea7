// A cluster of one API-like process asking its primary for the cluster's metrics, as under `npm start`.
// METRICS_PRIMARY=answer: the primary serves them; otherwise it never answers. Prints the worker's outcome
// as JSON.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { ClusterMetricsUnavailable, metricsText, serveClusterMetrics, startClusterMetrics } from '@sightline/runtime';

type Outcome = { text?: string; unavailable?: string; error?: string };

if (cluster.isPrimary) {
  if (process.env.METRICS_PRIMARY === 'answer') serveClusterMetrics();
  cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), execArgv: ['--import', 'tsx'] });
  const worker = cluster.fork({ SIGHTLINE_METRICS_FROM_PRIMARY: '1' });
  worker.on('message', (message: { outcome?: Outcome }) => {
    if (!message.outcome) return;
    process.stdout.write(`${JSON.stringify(message.outcome)}\n`);
    worker.kill();
  });
} else {
  startClusterMetrics();
  const outcome: Outcome = await metricsText(2000).then(
    (text) => ({ text }),
    (err: Error) => (err instanceof ClusterMetricsUnavailable ? { unavailable: err.message } : { error: err.message }),
  );
  process.send!({ outcome });
}
