import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import { findCriterion, type AnnotationCriterion } from '@sightline/db';
import {
  AnnotationParams,
  AnnotationSchema,
  AnnotationSetSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
} from '@sightline/schemas';
import { notFound, RequestValidationError } from '../../errors';
import { remark, spanFor, userOf } from './span-remarks';

/** Annotations of a span by a criterion, one per user, in its `annotations`. */
export default async function annotationRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  app.put(
    '/trace_log/:trace_id/annotations/:criterion_id',
    {
      config: { writesSpans: true },
      schema: {
        params: AnnotationParams,
        body: AnnotationSetSchema,
        response: { 200: AnnotationSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Set your annotation of a span by a criterion',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const criterion = await findCriterion(app.sql, req.organizationId, req.params.criterion_id);
      if (!criterion) throw notFound('annotation criterion');
      checkAnnotation(criterion, req.body);
      const span = await spanFor(base, req.organizationId, req.params.trace_id);
      const user = userOf(req);
      const annotation = {
        created_at: formatTimestamp(new Date()),
        user_id: user,
        score: req.body.score ?? null,
        value: req.body.value ?? null,
        annotation_name: criterion.name,
      };
      await remark(base, req, req.params.trace_id, span.root_trace_id, {
        annotations: { [criterion.id]: { [user]: annotation } },
      });
      return annotation;
    },
  );
  app.delete(
    '/trace_log/:trace_id/annotations/:criterion_id',
    {
      config: { writesSpans: true },
      schema: {
        params: AnnotationParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Remove your annotation of a span by a criterion',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const span = await spanFor(base, req.organizationId, req.params.trace_id);
      await remark(base, req, req.params.trace_id, span.root_trace_id, {
        annotations: { [req.params.criterion_id]: { [userOf(req)]: null } },
      });
      return { id: req.params.criterion_id, deleted: true };
    },
  );
}

/** A score criterion takes a score within its bounds; a value criterion a value, one of its options when it has some. */
function checkAnnotation(c: AnnotationCriterion, body: { score?: number | null; value?: string | null }) {
  const fail = (field: string, msg: string) => {
    throw new RequestValidationError([{ loc: ['body', field], msg, type: 'value_error' }]);
  };
  if (c.kind === 'score') {
    if (body.score == null) fail('score', `criterion '${c.name}' takes a score`);
    if ((c.min != null && body.score! < c.min) || (c.max != null && body.score! > c.max))
      fail('score', `the score must lie between ${c.min ?? '-∞'} and ${c.max ?? '∞'}`);
  } else {
    if (body.value == null) fail('value', `criterion '${c.name}' takes a value`);
    if (c.options && !c.options.includes(body.value!))
      fail('value', `the value must be one of ${c.options.join(', ')}`);
  }
}
