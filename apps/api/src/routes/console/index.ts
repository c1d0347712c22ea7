import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { countRoots, findSpanText, projectSummaries, traceRows, traceSkeleton } from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import {
  DetailSchema,
  errorResponses,
  ProjectSummarySchema,
  SpanSchema,
  TraceIdParams,
  TraceRowsRequestSchema,
  TraceRowsSchema,
  TraceSkeletonSchema,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { sendSerializedJson } from '../../json-stream';
import live from './live';

const READ_YOUR_WRITES_MS = 2000;

/** What the web console reads beyond api.md: summaries, table rows, a trace's skeleton, one span. */
export default async function consoleRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  await app.register(live);

  // Like GET /trace_log/{id}: writes accepted for the span, or for the trace it roots, are waited for.
  async function waitForSpan(org: string, traceId: string) {
    if (
      !(await waitUntilWritten(
        app.redis,
        [app.keys.pendingSpan(org, traceId), app.keys.pendingRoot(org, traceId)],
        READ_YOUR_WRITES_MS,
      ))
    ) {
      throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
    }
  }

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
      return sendSerializedJson(reply, Buffer.from(skeleton));
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
