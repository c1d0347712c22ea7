import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { findTraceTextOf } from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import { DetailSchema, errorResponses, TraceIdParams, TraceTreeResponseSchema } from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

const READ_YOUR_WRITES_MS = 2000;

/**
 * `GET /trace_log/{id}` (`POST /get_trace_logs` is in `list.ts`). PostgreSQL serializes the spans and the
 * trees are written as bytes: nothing is parsed into objects and serialized again.
 */
export default async function traceLogReadRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.get(
    '/trace_log/:trace_id',
    {
      schema: {
        params: TraceIdParams,
        response: { 200: TraceTreeResponseSchema, 404: DetailSchema, ...errorResponses },
        summary: 'A span with its subtree',
        tags: ['trace logs'],
      },
    },
    async (req, reply) => {
      const { trace_id } = req.params;
      const org = req.organizationId;
      // Read-your-writes: wait (bounded) for writes accepted for this span, or for the trace it roots.
      const written = await waitUntilWritten(app.redis, app.spanShards.pendingKeys(org, trace_id), READ_YOUR_WRITES_MS);
      // Past the bound, say so rather than answer 404 or stale data for a write that was accepted.
      if (!written) throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
      const spans = await findTraceTextOf(app.sql, org, trace_id, treeDialect(req, reply));
      if (!spans) throw notFound('trace log');
      return sendSerializedJson(reply, await app.renderTrees(spans, [trace_id]));
    },
  );
}
