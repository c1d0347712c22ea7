import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorResponses, FeedbackAcceptedSchema, FeedbackSchema } from '@sightline/schemas';

export default async function feedbackRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/feedback',
    {
      config: { writesSpans: true },
      schema: {
        body: FeedbackSchema,
        response: { 200: FeedbackAcceptedSchema, ...errorResponses },
        summary: 'Record feedback for a span',
        tags: ['feedback'],
      },
    },
    async (req) => {
      const { trace_id, inference_id, score, name, comment, target } = req.body;
      const traceId = (trace_id ?? inference_id)!;
      const note = name ?? comment;
      // Feedback is an event like an update: it may arrive before the span's create and still apply.
      await app.acceptSpanEvents(
        [
          {
            kind: 'feedback',
            organization_id: req.organizationId,
            trace_id: traceId,
            fields: {
              feedback_score: score,
              ...(note != null && { feedback_comment: note }),
              ...(target != null && { target }),
            },
          },
        ],
        req.id,
      );
      return { trace_id: traceId };
    },
  );
}
