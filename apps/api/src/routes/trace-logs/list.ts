import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { countRoots, rootIds, spanTextsOfRoots } from '@sightline/db';
import { errorResponses, GetTraceLogsSchema, TraceLogPageResponseSchema } from '@sightline/schemas';
import { sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

/**
 * `POST /get_trace_logs`. As in `read.ts`, PostgreSQL serializes the spans and the trees are written as
 * bytes: nothing is parsed into objects and serialized again.
 */
export default async function traceLogListRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

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
