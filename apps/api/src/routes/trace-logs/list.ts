import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { countRoots, rootIds, spanTextsOfRoots } from '@sightline/db';
import { errorResponses, GetTraceLogsSchema, TraceLogPageResponseSchema } from '@sightline/schemas';
import { sendSerializedJson } from '../../json-stream';
import { pageJson, rootQueryOf } from '../../listing';
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
      const org = req.organizationId;
      const query = await rootQueryOf(app, org, req.body);
      if (!query) return { total: 0, page: req.body.page, total_pages: 0, page_size: req.body.page_size, results: [] };
      const dialect = treeDialect(req, reply);
      // The exact total is counted while the page and its spans are read.
      const [total, trees] = await Promise.all([
        countRoots(app.sql, query),
        rootIds(app.sql, query).then(async (ids) =>
          app.renderTrees(await spanTextsOfRoots(app.sql, org, ids, dialect), ids),
        ),
      ]);
      return sendSerializedJson(
        reply,
        pageJson(req.body, total, Buffer.concat([Buffer.from('['), trees, Buffer.from(']')])),
      );
    },
  );
}
