import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import { AppError } from '../errors';

// The authenticated health check is a probe, not work: never limited.
const UNLIMITED = new Set(['/api/svc/v1', '/api/svc/v1/']);

/**
 * RATE_LIMIT_PER_MINUTE requests a minute per API key (a fixed one-minute window), counted in Redis so
 * that every API node shares the count. Registered after authentication, so only valid keys get a
 * counter. When Redis cannot answer, requests go through unlimited: span writes fail honestly then anyway
 * (503), and reads from PostgreSQL need not fail with them.
 */
export default fp(
  async (app) => {
    const perMinute = app.config.RATE_LIMIT_PER_MINUTE;
    if (!perMinute) return;
    await app.register(rateLimit, {
      max: perMinute,
      timeWindow: 60_000,
      redis: app.redis,
      nameSpace: app.keys.rateLimit,
      skipOnError: true,
      // Counted per key (or session) under its hash, set by authentication: no key is written to Redis in clear.
      keyGenerator: (req) => req.credential,
      allowList: (req) => UNLIMITED.has(req.routeOptions.url ?? ''),
      errorResponseBuilder: (_req, context) =>
        new AppError(
          context.statusCode,
          `rate limit exceeded: ${context.max} requests a minute per API key; retry in ${context.after}`,
        ),
    });
  },
  { name: 'rate-limits', dependencies: ['config', 'redis'] },
);
