import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ChainlibError, isSampledIn, runToSpans } from '@sightline/core';
import { findTraceOf, listRoots, spansOfRoots } from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import {
  AcceptedSpanSchema,
  ChainlibRunSchema,
  DetailSchema,
  errorResponses,
  TraceLogPageSchema,
  TraceLogTreeSchema,
  type TraceLogTree,
  GetTraceLogsSchema,
  TraceIdParams,
  TraceLogCreateSchema,
  TraceLogFields,
  TraceLogUpdateSchema,
  type ChainlibRun,
  type SpanEvent,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';

const FIELD_NAMES = Object.keys(TraceLogFields.shape);
const READ_YOUR_WRITES_MS = 2000;
function pickFields(source: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of FIELD_NAMES) if (source[name] !== undefined) fields[name] = source[name];
  return fields;
}

export default async function traceLogRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post('/trace_log', { schema: { body: TraceLogCreateSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Record a span', tags: ['trace logs'] } }, async (req) => {
    const body = req.body;
    const traceId = body.trace_id ?? randomUUID();
    const rootId = body.root_trace_id ?? traceId;
    if (!isSampledIn(rootId, body.log_sample_rate)) return { trace_id: traceId, sampled: false };
    const projectId = await app.resolveProjectId(req.organizationId, body);
    await app.acceptSpanEvents([
      {
        kind: 'create',
        organization_id: req.organizationId,
        trace_id: traceId,
        pending_root: rootId,
        fields: {
          ...pickFields(body),
          project_id: projectId,
          root_trace_id: rootId,
          parent_trace_id: body.parent_trace_id ?? traceId,
          ...(body.children != null && { children_ids: body.children }),
        },
      },
    ]);
    return { trace_id: traceId, sampled: true };
  });

  app.put('/trace_log', { schema: { body: TraceLogUpdateSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Update fields of a span', tags: ['trace logs'] } }, async (req) => {
    const { trace_id, root_trace_id, field_name_to_value_map } = req.body;
    await app.acceptSpanEvents([
      {
        kind: 'update',
        organization_id: req.organizationId,
        trace_id,
        ...(root_trace_id && { pending_root: root_trace_id }),
        fields: pickFields(field_name_to_value_map),
      },
    ]);
    return { trace_id };
  });

  app.get('/trace_log/:trace_id', { schema: { params: TraceIdParams, response: { 200: TraceLogTreeSchema, 404: DetailSchema, ...errorResponses }, summary: 'A span with its subtree', tags: ['trace logs'] } }, async (req) => {
    const { trace_id } = req.params;
    const org = req.organizationId;
    // Read-your-writes: wait (bounded) for writes accepted for this span, or for the trace it roots.
    const written = await waitUntilWritten(app.redis, [app.keys.pendingSpan(org, trace_id), app.keys.pendingRoot(org, trace_id)], READ_YOUR_WRITES_MS);
    // Past the bound, say so rather than answer 404 or stale data for a write that was accepted.
    if (!written) throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
    const rows = await findTraceOf(app.sql, org, trace_id);
    if (!rows) throw notFound('trace log');
    const [tree] = await app.assembleTrees(rows, [trace_id]);
    return tree as unknown as TraceLogTree;
  });

  app.post('/get_trace_logs', { schema: { body: GetTraceLogsSchema, response: { 200: TraceLogPageSchema, ...errorResponses }, summary: 'List root spans with their trees', tags: ['trace logs'] } }, async (req) => {
    const body = req.body;
    const org = req.organizationId;
    const empty = { total: 0, page: body.page, total_pages: 0, page_size: body.page_size, results: [] };
    let projectId: string | null = null;
    if (body.project_name) {
      projectId = await app.findProjectId(org, body.project_name);
      if (!projectId) return empty;
    }
    const { total, ids } = await listRoots(app.sql, { organizationId: org, projectId, filter: body, timeRange: body.time_range, status: body.status, page: body.page, pageSize: body.page_size });
    const rows = await spansOfRoots(app.sql, org, ids);
    const results = (await app.assembleTrees(rows, ids)) as unknown as TraceLogTree[];
    return { total, page: body.page, total_pages: Math.ceil(total / body.page_size), page_size: body.page_size, results };
  });

  const chainlib = {
    schema: { body: ChainlibRunSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Record a LangChain run tree as spans', tags: ['trace logs'] },
  };
  const ingestRun = async (req: { body: ChainlibRun; organizationId: string }) => {
    let spans;
    try {
      spans = runToSpans(req.body);
    } catch (err) {
      if (err instanceof ChainlibError) throw new RequestValidationError([{ loc: ['body', ...err.path], msg: err.message, type: 'value_error' }]);
      throw err;
    }
    spans.forEach((span, i) => {
      const checked = TraceLogFields.partial().safeParse(pickFields(span));
      if (!checked.success) throw RequestValidationError.fromZod('body', checked.error.issues.map((issue) => ({ ...issue, path: ['runs', i, ...issue.path] })));
    });
    const projectId = await app.resolveProjectId(req.organizationId, req.body);
    const events: Omit<SpanEvent, 'seq'>[] = spans.map((span) => ({
      kind: 'create',
      organization_id: req.organizationId,
      trace_id: span.trace_id,
      pending_root: span.root_trace_id,
      fields: { ...pickFields(span), project_id: projectId, root_trace_id: span.root_trace_id, parent_trace_id: span.parent_trace_id },
    }));
    await app.acceptSpanEvents(events);
    return { trace_id: spans[0].trace_id, spans: spans.length };
  };
  app.post('/trace_log/chainlib', chainlib, async (req) => ingestRun(req));
  app.post('/trace_log/langchain', { ...chainlib, schema: { ...chainlib.schema, hide: true } }, async (req) => ingestRun(req));
}
