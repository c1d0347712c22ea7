import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { countRoots, projectSummaries, traceRows } from '@sightline/db';
import { errorResponses, ProjectSummarySchema, TraceRowsRequestSchema, TraceRowsSchema } from '@sightline/schemas';
import { sendSerializedJson } from '../../json-stream';
import live from './live';
import spans from './spans';

/** What the web console reads beyond api.md: summaries, table rows; a trace's skeleton and one span in `spans.ts`. */
export default async function consoleRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  await app.register(live);

  app.get(
    '/projects',
    {
      schema: {
        response: { 200: z.array(ProjectSummarySchema), ...errorResponses },
        summary: 'Projects with their activity',
        tags: ['console'],
      },
    },
    async (req) => projectSummaries(app.sql, req.organizationId),
  );

  app.post(
    '/traces',
    {
      config: { access: 'read' },
      schema: {
        body: TraceRowsRequestSchema,
        response: { 200: TraceRowsSchema, ...errorResponses },
        summary: "A page of a project's root traces as table rows, with full-text search",
        tags: ['console'],
      },
    },
    async (req, reply) => {
      const body = req.body;
      const org = req.organizationId;
      const empty = { total: 0, page: body.page, total_pages: 0, page_size: body.page_size, results: [] };
      let projectId: string | null = body.project_uuid ?? null;
      if (!projectId && body.project_name) projectId = await app.findProjectId(org, body.project_name);
      if (!projectId && body.project_name) return empty;
      const query = {
        organizationId: org,
        projectId,
        filter: body,
        timeRange: body.time_range,
        status: body.status,
        search: body.search,
        page: body.page,
        pageSize: body.page_size,
      };
      const [total, rows] = await Promise.all([countRoots(app.sql, query), traceRows(app.sql, query)]);
      const head = JSON.stringify({
        total,
        page: body.page,
        total_pages: Math.ceil(total / body.page_size),
        page_size: body.page_size,
      });
      return sendSerializedJson(reply, Buffer.from(`${head.slice(0, -1)},"results":${rows}}`));
    },
  );

  await app.register(spans);
}
