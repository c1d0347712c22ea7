import fp from 'fastify-plugin';
import { poolReading } from '@sightline/db';
import { readLanes } from '@sightline/queues';
import {
  ClusterMetricsUnavailable,
  collectProcessMetrics,
  httpRequestDuration,
  metrics,
  metricsText,
  watchLanes,
  watchPool,
  watchQueues,
} from '@sightline/runtime';

/**
 * `GET /metrics` in Prometheus's text format, unauthenticated like /healthz: it holds no tenant data (routes
 * are labelled by pattern, never by URL; nothing is labelled by organization), and it is meant to be scraped
 * over the private network, like the probes. Queue figures are read from Redis at scrape time (shared by
 * every queue gauge and cached briefly); they describe the whole deployment, so every API node reports the
 * same values.
 */
export default fp(
  async (app) => {
    collectProcessMetrics();
    const unwatch = [
      watchQueues(app.allQueues, app.redis),
      watchPool('api', () => poolReading(app.sql)),
      watchLanes(() => readLanes(app.redis, app.keys, app.keyPrefix)),
    ];

    app.addHook('onResponse', (req, reply, done) => {
      // Unmatched URLs share one label: a scan of random paths must not create a series per path.
      const route = req.routeOptions.url ?? 'unmatched';
      httpRequestDuration.observe(
        { method: req.method, route, status_code: reply.statusCode },
        reply.elapsedTime / 1000,
      );
      done();
    });

    app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
      try {
        return reply.type(metrics.contentType).send(await metricsText());
      } catch (err) {
        if (!(err instanceof ClusterMetricsUnavailable)) throw err;
        req.log.warn({ err: err.message }, 'metrics scrape failed');
        return reply.code(503).send({ detail: `metrics unavailable: ${err.message}` });
      }
    });

    app.addHook('onClose', async () => unwatch.forEach((stop) => stop()));
  },
  { name: 'metrics', dependencies: ['all-queues', 'redis', 'sql'] },
);
