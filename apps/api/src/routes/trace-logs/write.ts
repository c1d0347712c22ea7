import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { pendingRootOf } from '@sightline/queues';
import { AcceptedSpanSchema, errorResponses, TraceLogCreateSchema, TraceLogUpdateSchema } from '@sightline/schemas';
import { createEvent, pickFields, sampledIn } from './events';

/** `POST /trace_log` and `PUT /trace_log`: acknowledged once the event is durable in Redis. */
export default async function traceLogWriteRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/trace_log',
    {
      config: { writesSpans: true },
      schema: {
        body: TraceLogCreateSchema,
        response: { 200: AcceptedSpanSchema, ...errorResponses },
        summary: 'Record a span',
        tags: ['trace logs'],
      },
    },
    async (req) => {
      const traceId = req.body.trace_id ?? randomUUID();
      if (!sampledIn(req.body, traceId)) return { trace_id: traceId, sampled: false };
      await app.acceptSpanEvents(
        [createEvent(req.organizationId, req.body, await app.resolveProjectId(req.organizationId, req.body), traceId)],
        req.id,
      );
      return { trace_id: traceId, sampled: true };
    },
  );

  app.put(
    '/trace_log',
    {
      config: { writesSpans: true },
      schema: {
        body: TraceLogUpdateSchema,
        response: { 200: AcceptedSpanSchema, ...errorResponses },
        summary: 'Update fields of a span',
        tags: ['trace logs'],
      },
    },
    async (req) => {
      const { trace_id, root_trace_id, field_name_to_value_map } = req.body;
      await app.acceptSpanEvents(
        [
          {
            kind: 'update',
            organization_id: req.organizationId,
            trace_id,
            ...pendingRootOf(trace_id, root_trace_id),
            fields: pickFields(field_name_to_value_map),
          },
        ],
        req.id,
      );
      return { trace_id };
    },
  );
}
