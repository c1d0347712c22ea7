import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { countRoots, findTraceTextOf, rootIds, spanTextsOfRoots } from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import {
  DetailSchema,
  errorResponses,
  GetTraceLogsSchema,
  TraceIdParams,
  TraceLogPageResponseSchema,
  TraceTreeResponseSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

const READ_YOUR_WRITES_MS = 2000;

/**
 * `GET /trace_log/{id}` and `POST /get_trace_logs`. PostgreSQL serializes the spans and the trees are
 * written as bytes: nothing is parsed into objects and serialized again.
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
      const written = await waitUntilWritten(
        app.redis,
        [app.keys.pendingSpan(org, trace_id), app.keys.pendingRoot(org, trace_id)],
        READ_YOUR_WRITES_MS,
      );
      // Past the bound, say so rather than answer 404 or stale data for a write that was accepted.
      if (!written) throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
      const spans = await findTraceTextOf(app.sql, org, trace_id, treeDialect(req, reply));
      if (!spans) throw notFound('trace log');
      return sendSerializedJson(reply, await app.renderTrees(spans, [trace_id]));
    },
  );

  app.post(
    '/get_trace_logs',
    {
      config: { access: 'read' },
      schema: {
        body: GetTraceLogsSchema,
        response: { 200: TraceLogPageResponseSchema, ...errorResponses },
        summary: 'List root spans with their trees',
        tags: ['trace logs'],
      },
    },
    async (req, reply) => {
      const body = req.body;
      const org = req.organizationId;
      const empty = { total: 0, page: body.page, total_pages: 0, page_size: body.page_size, results: [] };
      let projectId: string | null = null;
      if (body.project_name) {
        projectId = await app.findProjectId(org, body.project_name);
        if (!projectId) return empty;
      }
      const query = {
        organizationId: org,
        projectId,
        filter: body,
        timeRange: body.time_range,
        status: body.status,
        page: body.page,
        pageSize: body.page_size,
      };
      const dialect = treeDialect(req, reply);
      // The exact total is counted while the page and its spans are read.
      const [total, trees] = await Promise.all([
        countRoots(app.sql, query),
        rootIds(app.sql, query).then(async (ids) =>
          app.renderTrees(await spanTextsOfRoots(app.sql, org, ids, dialect), ids),
        ),
      ]);
      const head = JSON.stringify({
        total,
        page: body.page,
        total_pages: Math.ceil(total / body.page_size),
        page_size: body.page_size,
      });
      return sendSerializedJson(
        reply,
        Buffer.concat([Buffer.from(`${head.slice(0, -1)},"results":[`), trees, Buffer.from(']}')]),
      );
    },
  );
}
