import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ChainlibError, isSampledIn, runToSpans } from '@sightline/core';
import { countRoots, findTraceTextOf, rootIds, spanTextsOfRoots } from '@sightline/db';
import { spanCreateEvent, waitUntilWritten, type NewSpanEvent } from '@sightline/queues';
import {
  AcceptedSpanSchema,
  ChainlibRunSchema,
  DetailSchema,
  errorResponses,
  TraceLogPageResponseSchema,
  TraceTreeResponseSchema,
  GetTraceLogsSchema,
  TraceIdParams,
  TraceLogCreateSchema,
  TraceLogBatchSchema,
  BatchResultSchema,
  MAX_BATCH_SPANS,
  type TraceLogCreate,
  TraceLogFields,
  TraceLogUpdateSchema,
  type ChainlibRun,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';
import { sendSerializedJson } from '../../json-stream';
import { treeDialect } from '../../tree-dialect';

type BatchResult = z.infer<typeof BatchResultSchema>['results'][number];
const FIELD_NAMES = Object.keys(TraceLogFields.shape);
const READ_YOUR_WRITES_MS = 2000;
function pickFields(source: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of FIELD_NAMES) if (source[name] !== undefined) fields[name] = source[name];
  return fields;
}

export default async function traceLogRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  /** Whether the span's trace is kept (`log_sample_rate` decides per root, so a trace is kept whole). */
  const sampledIn = (body: TraceLogCreate, traceId: string) => isSampledIn(body.root_trace_id ?? traceId, body.log_sample_rate);

  const createEvent = (organizationId: string, body: TraceLogCreate, projectId: string, traceId: string): NewSpanEvent =>
    spanCreateEvent({
      organization_id: organizationId,
      trace_id: traceId,
      root_trace_id: body.root_trace_id,
      parent_trace_id: body.parent_trace_id,
      project_id: projectId,
      fields: { ...pickFields(body), ...(body.children != null && { children_ids: body.children }) },
    });

  app.post('/trace_log', { config: { writesSpans: true }, schema: { body: TraceLogCreateSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Record a span', tags: ['trace logs'] } }, async (req) => {
    const traceId = req.body.trace_id ?? randomUUID();
    if (!sampledIn(req.body, traceId)) return { trace_id: traceId, sampled: false };
    await app.acceptSpanEvents([createEvent(req.organizationId, req.body, await app.resolveProjectId(req.organizationId, req.body), traceId)], req.id);
    return { trace_id: traceId, sampled: true };
  });

  // Each item is checked and accepted on its own terms, as if posted alone; the valid ones are accepted
  // together (in array order, so a later item about the same span wins) even when others are refused.
  app.post(
    '/trace_logs/batch',
    { config: { writesSpans: true }, schema: { body: TraceLogBatchSchema, response: { 200: BatchResultSchema, 207: BatchResultSchema, ...errorResponses }, summary: `Record up to ${MAX_BATCH_SPANS} spans`, tags: ['trace logs'] } },
    async (req, reply) => {
      const org = req.organizationId;
      const results: BatchResult[] = [];
      const events: NewSpanEvent[] = [];
      for (const [index, item] of req.body.trace_logs.entries()) {
        const parsed = TraceLogCreateSchema.safeParse(item);
        if (!parsed.success) {
          results.push({ index, status: 422, detail: RequestValidationError.fromZod('body', parsed.error.issues).detail.map((d) => ({ ...d, loc: ['body', 'trace_logs', index, ...d.loc.slice(1)] })) });
          continue;
        }
        const traceId = parsed.data.trace_id ?? randomUUID();
        if (!sampledIn(parsed.data, traceId)) {
          results.push({ index, status: 200, trace_id: traceId, sampled: false });
          continue;
        }
        let projectId: string;
        try {
          projectId = await app.resolveProjectId(org, parsed.data);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          results.push({ index, status: err.statusCode, trace_id: traceId, detail: err.message });
          continue;
        }
        events.push(createEvent(org, parsed.data, projectId, traceId));
        results.push({ index, status: 200, trace_id: traceId, sampled: true });
      }
      if (events.length) await app.acceptSpanEvents(events, req.id);
      return reply.code(results.every((r) => r.status === 200) ? 200 : 207).send({ results });
    },
  );

  app.put('/trace_log', { config: { writesSpans: true }, schema: { body: TraceLogUpdateSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Update fields of a span', tags: ['trace logs'] } }, async (req) => {
    const { trace_id, root_trace_id, field_name_to_value_map } = req.body;
    await app.acceptSpanEvents([
      {
        kind: 'update',
        organization_id: req.organizationId,
        trace_id,
        ...(root_trace_id && { pending_root: root_trace_id }),
        fields: pickFields(field_name_to_value_map),
      },
    ], req.id);
    return { trace_id };
  });

  app.get('/trace_log/:trace_id', { schema: { params: TraceIdParams, response: { 200: TraceTreeResponseSchema, 404: DetailSchema, ...errorResponses }, summary: 'A span with its subtree', tags: ['trace logs'] } }, async (req, reply) => {
    const { trace_id } = req.params;
    const org = req.organizationId;
    // Read-your-writes: wait (bounded) for writes accepted for this span, or for the trace it roots.
    const written = await waitUntilWritten(app.redis, [app.keys.pendingSpan(org, trace_id), app.keys.pendingRoot(org, trace_id)], READ_YOUR_WRITES_MS);
    // Past the bound, say so rather than answer 404 or stale data for a write that was accepted.
    if (!written) throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
    // PostgreSQL serializes the spans and the tree is written as bytes: nothing is parsed into objects and
    // serialized again.
    const spans = await findTraceTextOf(app.sql, org, trace_id, treeDialect(req, reply));
    if (!spans) throw notFound('trace log');
    return sendSerializedJson(reply, await app.renderTrees(spans, [trace_id]));
  });

  app.post('/get_trace_logs', { schema: { body: GetTraceLogsSchema, response: { 200: TraceLogPageResponseSchema, ...errorResponses }, summary: 'List root spans with their trees', tags: ['trace logs'] } }, async (req, reply) => {
    const body = req.body;
    const org = req.organizationId;
    const empty = { total: 0, page: body.page, total_pages: 0, page_size: body.page_size, results: [] };
    let projectId: string | null = null;
    if (body.project_name) {
      projectId = await app.findProjectId(org, body.project_name);
      if (!projectId) return empty;
    }
    const query = { organizationId: org, projectId, filter: body, timeRange: body.time_range, status: body.status, page: body.page, pageSize: body.page_size };
    const dialect = treeDialect(req, reply);
    // The exact total is counted while the page and its spans are read.
    const [total, trees] = await Promise.all([
      countRoots(app.sql, query),
      rootIds(app.sql, query).then(async (ids) => app.renderTrees(await spanTextsOfRoots(app.sql, org, ids, dialect), ids)),
    ]);
    const head = JSON.stringify({ total, page: body.page, total_pages: Math.ceil(total / body.page_size), page_size: body.page_size });
    return sendSerializedJson(reply, Buffer.concat([Buffer.from(`${head.slice(0, -1)},"results":[`), trees, Buffer.from(']}')]));
  });

  const chainlib = {
    config: { writesSpans: true },
    schema: { body: ChainlibRunSchema, response: { 200: AcceptedSpanSchema, ...errorResponses }, summary: 'Record a LangChain run tree as spans', tags: ['trace logs'] },
  };
  const ingestRun = async (req: { body: ChainlibRun; organizationId: string; id: string }) => {
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
    const events = spans.map((span) =>
      spanCreateEvent({ organization_id: req.organizationId, trace_id: span.trace_id, root_trace_id: span.root_trace_id, parent_trace_id: span.parent_trace_id, project_id: projectId, fields: pickFields(span) }),
    );
    await app.acceptSpanEvents(events, req.id);
    return { trace_id: spans[0].trace_id, spans: spans.length };
  };
  app.post('/trace_log/chainlib', chainlib, async (req) => ingestRun(req));
  app.post('/trace_log/langchain', { ...chainlib, schema: { ...chainlib.schema, hide: true } }, async (req) => ingestRun(req));
}
