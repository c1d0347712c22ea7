import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import { AppError } from '../errors';

// Liveness must not fail because the node is busy (an orchestrator would kill a node that is only slow),
// and the metrics are how an operator sees the pressure. Readiness does answer 503 under pressure: a
// balancer then sends the node less traffic until it recovers.
const NEVER_REFUSED = new Set(['/healthz', '/metrics']);

/**
 * Overload protection for the whole API: requests answer 503 while the event loop lags more than
 * MAX_EVENT_LOOP_DELAY_MS (measured by @fastify/under-pressure over 1 s windows). The span-write backlog
 * that bounds span writes (SPAN_BACKLOG_LIMIT) is enforced where events are accepted (services/span-intake.ts).
 */
export default fp(
  async (app) => {
    const maxDelay = app.config.MAX_EVENT_LOOP_DELAY_MS;
    if (maxDelay > 0) {
      await app.register(underPressure, {
        maxEventLoopDelay: maxDelay,
        // A rejection reaches the error handler, which answers `{"detail": ...}` with Retry-After.
        pressureHandler: (req) =>
          NEVER_REFUSED.has(req.routeOptions.url ?? '')
            ? undefined
            : Promise.reject(new AppError(503, 'the server is overloaded; retry shortly')),
      });
    }
  },
  { name: 'overload', dependencies: ['config'] },
);
