import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { NewSpanEvent } from '@sightline/queues';
import {
  BatchResultSchema,
  errorResponses,
  MAX_BATCH_SPANS,
  TraceLogBatchSchema,
  TraceLogCreateSchema,
} from '@sightline/schemas';
import { AppError, RequestValidationError } from '../../errors';
import { createEvent, sampledIn } from './events';

type BatchResult = z.infer<typeof BatchResultSchema>['results'][number];

/**
 * `POST /trace_logs/batch`. Each item is checked and accepted on its own terms, as if posted alone; the
 * valid ones are accepted together (in array order, so a later item about the same span wins) even when
 * others are refused, and the answer is 207 when any was.
 */
export default async function traceLogBatchRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  async function checkItem(org: string, item: unknown, index: number, events: NewSpanEvent[]): Promise<BatchResult> {
    const parsed = TraceLogCreateSchema.safeParse(item);
    if (!parsed.success) {
      return {
        index,
        status: 422,
        detail: RequestValidationError.fromZod('body', parsed.error.issues).detail.map((d) => ({
          ...d,
          loc: ['body', 'trace_logs', index, ...d.loc.slice(1)],
        })),
      };
    }
    const traceId = parsed.data.trace_id ?? randomUUID();
    if (!sampledIn(parsed.data, traceId)) return { index, status: 200, trace_id: traceId, sampled: false };
    let projectId: string;
    try {
      projectId = await app.resolveProjectId(org, parsed.data);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { index, status: err.statusCode, trace_id: traceId, detail: err.message };
    }
    events.push(createEvent(org, parsed.data, projectId, traceId));
    return { index, status: 200, trace_id: traceId, sampled: true };
  }

  app.post(
    '/trace_logs/batch',
    {
      config: { writesSpans: true },
      schema: {
        body: TraceLogBatchSchema,
        response: { 200: BatchResultSchema, 207: BatchResultSchema, ...errorResponses },
        summary: `Record up to ${MAX_BATCH_SPANS} spans`,
        tags: ['trace logs'],
      },
    },
    async (req, reply) => {
      const results: BatchResult[] = [];
      const events: NewSpanEvent[] = [];
      for (const [index, item] of req.body.trace_logs.entries())
        results.push(await checkItem(req.organizationId, item, index, events));
      if (events.length) await app.acceptSpanEvents(events, req.id);
      return reply.code(results.every((r) => r.status === 200) ? 200 : 207).send({ results });
    },
  );
}
