import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ChainlibError, runToSpans } from '@sightline/core';
import { spanCreateEvent } from '@sightline/queues';
import {
  AcceptedSpanSchema,
  ChainlibRunSchema,
  errorResponses,
  TraceLogFields,
  type ChainlibRun,
} from '@sightline/schemas';
import { RequestValidationError } from '../../errors';
import { pickFields } from './events';

/** `POST /trace_log/chainlib` (and its older name `/trace_log/langchain`): a LangChain run tree as spans. */
export default async function chainlibRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  const ingestRun = async (req: { body: ChainlibRun; organizationId: string; id: string }) => {
    let spans;
    try {
      spans = runToSpans(req.body);
    } catch (err) {
      if (err instanceof ChainlibError)
        throw new RequestValidationError([{ loc: ['body', ...err.path], msg: err.message, type: 'value_error' }]);
      throw err;
    }
    spans.forEach((span, i) => {
      const checked = TraceLogFields.partial().safeParse(pickFields(span));
      if (!checked.success)
        throw RequestValidationError.fromZod(
          'body',
          checked.error.issues.map((issue) => ({ ...issue, path: ['runs', i, ...issue.path] })),
        );
    });
    const projectId = await app.resolveProjectId(req.organizationId, req.body);
    const events = spans.map((span) =>
      spanCreateEvent({
        organization_id: req.organizationId,
        trace_id: span.trace_id,
        root_trace_id: span.root_trace_id,
        parent_trace_id: span.parent_trace_id,
        project_id: projectId,
        fields: pickFields(span),
      }),
    );
    await app.acceptSpanEvents(events, req.id);
    return { trace_id: spans[0].trace_id, spans: spans.length };
  };

  const options = {
    config: { writesSpans: true },
    schema: {
      body: ChainlibRunSchema,
      response: { 200: AcceptedSpanSchema, ...errorResponses },
      summary: 'Record a LangChain run tree as spans',
      tags: ['trace logs'],
    },
  };
  app.post('/trace_log/chainlib', options, async (req) => ingestRun(req));
  app.post('/trace_log/langchain', { ...options, schema: { ...options.schema, hide: true } }, async (req) =>
    ingestRun(req),
  );
}
