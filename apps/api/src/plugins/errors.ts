import fp from 'fastify-plugin';
import type { FastifyError } from 'fastify';
import { ZodError } from 'zod';
import { FilterError, SearchError } from '@sightline/core';
import { isUnreachable } from '@sightline/db';
import { isRedisAway } from '@sightline/runtime';
import { AppError, RequestValidationError } from '../errors';

const QUERY_CANCELED = '57014';

/**
 * A dependency (PostgreSQL or Redis) out of reach: answered 503, honestly, not 500. So is a statement an
 * administrator cancelled (pg_cancel_backend); one cancelled by the statement timeout has an answer of its own.
 */
function isUnavailable(err: Error & { code?: string }): boolean {
  return isUnreachable(err) || err.code === QUERY_CANCELED || isRedisAway(err);
}

export default fp(
  async (app) => {
    app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }));

    app.setErrorHandler((err: FastifyError & { detail?: unknown }, req, reply) => {
      if (err instanceof RequestValidationError) return reply.code(422).send({ detail: err.detail });
      // A value that passed the request schema but not a later, stricter one (a queue payload): still the
      // caller's input, so a 422 rather than a 500.
      if (err instanceof ZodError) {
        req.log.warn({ err }, 'input rejected after request validation');
        return reply.code(422).send({ detail: RequestValidationError.fromZod('body', err.issues).detail });
      }
      if (err instanceof FilterError) {
        const loc =
          err.index === undefined
            ? ['body', err.field]
            : ['body', 'filters', err.index, err.field.replace('filter_', '')];
        return reply.code(422).send({ detail: [{ loc, msg: err.message, type: 'value_error' }] });
      }
      if (err instanceof SearchError) {
        return reply.code(422).send({ detail: [{ loc: ['body', 'search'], msg: err.message, type: 'value_error' }] });
      }
      // PostgreSQL cancelled a statement at the API's statement_timeout: asking again soon would take as long.
      if (err.code === QUERY_CANCELED && /statement timeout/.test(err.message)) {
        req.log.warn({ err }, 'statement timeout');
        const seconds = req.server.config.STATEMENT_TIMEOUT_MS / 1000;
        return reply.code(503).send({
          detail: `the query took longer than ${seconds} s and was stopped; narrow the time range or add a filter`,
        });
      }
      if (err instanceof AppError) {
        const retryAfter = err.retryAfterSeconds ?? (err.statusCode === 503 ? 1 : undefined);
        if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
        return reply.code(err.statusCode).send({ detail: err.message });
      }
      if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return reply.code(413).send({ detail: 'request body is too large' });
      if (isUnavailable(err)) {
        req.log.warn({ err }, 'dependency unavailable');
        return reply.code(503).header('retry-after', '5').send({ detail: 'service temporarily unavailable' });
      }
      // Fastify's own 4xx (unsupported media type, bad headers, ...) keep their status and message.
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return reply.code(err.statusCode).send({ detail: err.message });
      }
      req.log.error({ err }, 'unexpected error');
      return reply.code(500).send({ detail: 'Internal Server Error' });
    });
  },
  { name: 'errors' },
);
