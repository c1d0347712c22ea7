import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { findSpanText, traceSkeleton, traceSpansContaining } from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import {
  DetailSchema,
  errorResponses,
  SpanSchema,
  TraceIdParams,
  TraceSearchQuery,
  TraceSearchSchema,
  TraceSkeletonSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';

const READ_YOUR_WRITES_MS = 2000;

/** A trace's skeleton, one span, and a search within the trace, for the console's trace view. */
export default async function consoleSpanRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  // Like GET /trace_log/{id}: writes accepted for the span, or for the trace it roots, are waited for.
  async function waitForSpan(org: string, traceId: string) {
    if (!(await waitUntilWritten(app.redis, app.spanShards.pendingKeys(org, traceId), READ_YOUR_WRITES_MS))) {
      throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
    }
  }

  app.get(
    '/trace/:trace_id/skeleton',
    {
      schema: {
        params: TraceIdParams,
        response: { 200: TraceSkeletonSchema, 404: DetailSchema, ...errorResponses },
        summary: 'The skeleton of the trace holding a span: places, names, timing, tokens, cost',
        tags: ['console'],
      },
    },
    async (req, reply) => {
      await waitForSpan(req.organizationId, req.params.trace_id);
      const skeleton = await traceSkeleton(app.sql, req.organizationId, req.params.trace_id);
      if (!skeleton) throw notFound('trace log');
      return sendSerializedJson(reply, skeleton);
    },
  );

  app.get(
    '/trace/:trace_id/search',
    {
      schema: {
        params: TraceIdParams,
        querystring: TraceSearchQuery,
        response: { 200: TraceSearchSchema, 404: DetailSchema, ...errorResponses },
        summary: 'The spans of the trace holding a span whose name, inputs, output or metadata contain a text',
        tags: ['console'],
      },
    },
    async (req) => {
      await waitForSpan(req.organizationId, req.params.trace_id);
      const ids = await traceSpansContaining(app.sql, req.organizationId, req.params.trace_id, req.query.text);
      if (!ids) throw notFound('trace log');
      return { trace_ids: ids };
    },
  );

  app.get(
    '/span/:trace_id',
    {
      schema: {
        params: TraceIdParams,
        response: { 200: SpanSchema, 404: DetailSchema, ...errorResponses },
        summary: 'One span with all its fields, without its children',
        tags: ['console'],
      },
    },
    async (req, reply) => {
      await waitForSpan(req.organizationId, req.params.trace_id);
      const span = await findSpanText(app.sql, req.organizationId, req.params.trace_id);
      if (!span) throw notFound('trace log');
      return sendSerializedJson(reply, Buffer.from(span));
    },
  );
}
