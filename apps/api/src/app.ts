import cookie from '@fastify/cookie';
import sse from '@fastify/sse';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { ZodType } from 'zod';
import { logDestination } from '@sightline/runtime';
import type { ApiEnv } from '@sightline/schemas';
import { RequestValidationError } from './errors';
import { redactUrl } from './log-redaction';
import admin from './plugins/admin';
import allQueues from './plugins/all-queues';
import auth from './plugins/auth';
import compression from './plugins/compression';
import configPlugin from './plugins/config';
import consolePlugin from './plugins/console';
import errors from './plugins/errors';
import jsonBody from './plugins/json-body';
import metrics from './plugins/metrics';
import openapi from './plugins/openapi';
import overload from './plugins/overload';
import pool from './plugins/pool';
import queues from './plugins/queues';
import redis from './plugins/redis';
import rateLimits from './plugins/rate-limits';
import replicas from './plugins/replicas';
import replies from './plugins/replies';
import requestIds, { requestId } from './plugins/request-id';
import security from './plugins/security';
import sql from './plugins/sql';
import completions from './services/completions';
import projects from './services/projects';
import spanIntake from './services/span-intake';
import accessRoutes from './routes/access/index';
import signInRoutes from './routes/auth/sign-in';
import auditLogRoutes from './routes/audit-log/index';
import completionRoutes from './routes/completions/index';
import consoleRoutes from './routes/console/index';
import datasetRoutes from './routes/datasets/index';
import evalMetricRoutes from './routes/eval-metrics/index';
import evalRuleRoutes from './routes/eval-rules/index';
import annotationQueueRoutes from './routes/annotation-queues/index';
import monitorRoutes from './routes/monitors/index';
import budgetRoutes from './routes/budgets/index';
import experimentRoutes from './routes/experiments/index';
import feedbackRoutes from './routes/feedback/index';
import healthRoutes from './routes/health/index';
import insightRoutes from './routes/insights/index';
import projectRoutes from './routes/projects/index';
import remarkRoutes from './routes/remarks/index';
import promptRoutes from './routes/prompts/index';
import gatewayRouteRoutes from './routes/gateway-routes/index';
import providerKeyRoutes from './routes/provider-keys/index';
import otelRoutes from './routes/otel/index';
import traceLogRoutes from './routes/trace-logs/index';
import invitationRoutes from './routes/invitations/index';
import userRoutes from './routes/users/index';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set when shutdown begins: `/readyz` answers 503 so that balancers stop sending traffic here. */
    draining: boolean;
  }
}

// Fastify names the request parts differently from the API's error locations.
const LOCATION: Record<string, string> = { body: 'body', params: 'path', querystring: 'query', headers: 'header' };

/** Fastify's own request fields, with credentials sent in the query (the live tail's key) redacted. */
const loggedRequest = (req: FastifyRequest) => ({
  method: req.method,
  url: redactUrl(req.url),
  host: req.host,
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
});

/** The API as a Fastify instance, without listening: `server.ts` serves it, tests call `inject`. */
export async function buildApp(config: ApiEnv, { logger, ...options }: FastifyServerOptions = {}) {
  // Readable lines at a terminal, JSON otherwise.
  const stream = logDestination();
  const app = Fastify({
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Logger options given by the caller (a test's destination stream) keep the redacting serializer.
    logger: {
      level: config.LOG_LEVEL,
      ...(stream && { stream }),
      ...(typeof logger === 'object' && logger),
      serializers: { ...(typeof logger === 'object' && logger.serializers), req: loggedRequest },
    },
    genReqId: requestId,
    // Errors raised before routing (a malformed URL, a bad content type) keep the API's error shape.
    frameworkErrors: (err, req, reply) =>
      void (reply as { header(k: string, v: string): { code(n: number): { send(b: unknown): unknown } } })
        .header('x-request-id', req.id)
        .code(400)
        .send({ detail: err.message }),
    ...options,
  });

  app.decorate('draining', false);
  app.setValidatorCompiler<ZodType>(({ schema, httpPart }) => (data) => {
    const result = schema.safeParse(data);
    return result.success
      ? { value: result.data }
      : { error: RequestValidationError.fromZod(LOCATION[httpPart ?? 'body'] ?? 'body', result.error.issues) };
  });
  // Responses are sent as they are; their schemas only describe them in the OpenAPI document.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // First, so that every response, even one refused by a later hook, carries its id and security headers.
  await app.register(requestIds);
  await app.register(security, { config });
  await app.register(errors);
  await app.register(jsonBody);
  // Before any route: it adds its hook to each route as the route is declared.
  await app.register(compression);
  // The connections, each its own plugin; they close in reverse order: producers, pool, Redis, PostgreSQL.
  await app.register(configPlugin, { config });
  await app.register(sql);
  await app.register(replicas);
  await app.register(redis);
  await app.register(pool);
  await app.register(queues);
  await app.register(allQueues);
  await app.register(metrics);
  await app.register(overload);
  await app.register(projects);
  await app.register(spanIntake);
  await app.register(replies);
  await app.register(completions);
  await app.register(sse);
  await app.register(openapi);
  await app.register(healthRoutes);
  await app.register(admin);
  await app.register(cookie);
  await app.register(signInRoutes, { prefix: '/api/svc/v1/auth' });
  await app.register(authenticatedRoutes);
  await app.register(consolePlugin);
  return app;
}

/**
 * Everything a key opens: the API of api.md under /api/svc/v1, and the OTLP intake both at the root (where
 * an exporter given `OTEL_EXPORTER_OTLP_ENDPOINT=http://host:8000` sends) and under /api/svc/v1/otel.
 */
async function authenticatedRoutes(app: FastifyInstance) {
  await app.register(auth);
  await app.register(rateLimits);
  await app.register(v1Routes, { prefix: '/api/svc/v1' });
  await app.register(otelRoutes);
}

/** The API of api.md. */
async function v1Routes(v1: FastifyInstance) {
  await v1.register(healthRoutes.v1);
  await v1.register(accessRoutes);
  await v1.register(auditLogRoutes);
  await v1.register(consoleRoutes);
  await v1.register(remarkRoutes);
  await v1.register(insightRoutes);
  await v1.register(projectRoutes);
  await v1.register(traceLogRoutes);
  await v1.register(feedbackRoutes);
  await v1.register(completionRoutes);
  await v1.register(promptRoutes);
  await v1.register(providerKeyRoutes);
  await v1.register(gatewayRouteRoutes);
  await v1.register(datasetRoutes);
  await v1.register(experimentRoutes);
  await v1.register(evalMetricRoutes);
  await v1.register(evalRuleRoutes);
  await v1.register(annotationQueueRoutes);
  await v1.register(monitorRoutes);
  await v1.register(budgetRoutes);
  await v1.register(invitationRoutes);
  await v1.register(userRoutes);
  await v1.register(otelRoutes, { prefix: '/otel' });
}
