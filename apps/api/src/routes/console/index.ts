import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { countTraceRows, projectSummaries, traceRowsPage } from '@sightline/db';
import {
  errorResponses,
  ProjectSummarySchema,
  TraceCountSchema,
  TraceRowsRequestSchema,
  TraceRowsSchema,
} from '@sightline/schemas';
import { sendSerializedJson } from '../../json-stream';
import { pageJson, rootQueryOf } from '../../listing';
import experiments from './experiments';
import traceExport from './export';
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
    async (req) => app.lagTolerant((sql) => projectSummaries(sql, req.organizationId)),
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
      const query = await rootQueryOf(app, req.organizationId, req.body);
      const { page, page_size } = req.body;
      if (!query)
        return { total: 0, total_exact: true, searched_roots: null, page, total_pages: 0, page_size, results: [] };
      const options = { content: req.body.content, metadataKeys: req.body.metadata_keys, count: req.body.count };
      const found = await app.lagTolerant((sql) => traceRowsPage(sql, query, options));
      return sendSerializedJson(
        reply,
        pageJson(req.body, found.total, Buffer.from(found.rows), {
          more: !found.exact && found.searchedRoots === null,
          extra: { total_exact: found.exact, searched_roots: found.searchedRoots },
        }),
      );
    },
  );

  app.post(
    '/traces/count',
    {
      config: { access: 'read' },
      schema: {
        body: TraceRowsRequestSchema,
        response: { 200: TraceCountSchema, ...errorResponses },
        summary:
          'How many root traces a POST /traces request matches (its page, sort and content aside): the console asks apart, so that a page does not wait for its count',
        tags: ['console'],
      },
    },
    async (req) => {
      const query = await rootQueryOf(app, req.organizationId, req.body);
      return { total: query ? await app.lagTolerant((sql) => countTraceRows(sql, query)) : 0 };
    },
  );

  await app.register(spans);
  await app.register(traceExport);
  await app.register(experiments);
}
