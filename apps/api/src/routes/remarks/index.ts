import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatTimestamp } from '@sightline/core';
import {
  createCriterion,
  deleteCriterion,
  findCriterion,
  findSpanForRemarks,
  listCriteria,
  type AnnotationCriterion,
} from '@sightline/db';
import { waitUntilWritten } from '@sightline/queues';
import {
  AnnotationParams,
  AnnotationSchema,
  AnnotationSetSchema,
  CommentCreateSchema,
  CommentParams,
  CommentSchema,
  CriterionCreateSchema,
  CriterionParams,
  CriterionSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  TraceIdParams,
  type Remarks,
} from '@sightline/schemas';
import { AppError, notFound, RequestValidationError } from '../../errors';

const READ_YOUR_WRITES_MS = 2000;
const criterionToWire = (c: AnnotationCriterion) => ({ ...c, created_at: formatTimestamp(c.created_at) });
/** Who remarks: the key's label (a person's email), else the key itself. */
const userOf = (req: FastifyRequest) => req.caller.label ?? `key:${req.caller.keyId}`;

/**
 * Comments and annotations made in the console, and the criteria annotations use. They are written as
 * span events (durable once answered, merged entry by entry) into the span's `comments` and `annotations`,
 * in compat.md's shapes, where the clients and the `annotation:` filters find them.
 */
export default async function remarkRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

  async function spanFor(org: string, traceId: string) {
    if (!(await waitUntilWritten(app.redis, [app.keys.pendingSpan(org, traceId)], READ_YOUR_WRITES_MS))) {
      throw new AppError(503, 'accepted writes to this trace log are still being applied; retry shortly');
    }
    const span = await findSpanForRemarks(app.sql, org, traceId);
    if (!span) throw notFound('trace log');
    return span;
  }
  const remark = (req: FastifyRequest & { organizationId: string }, traceId: string, root: string, remarks: Remarks) =>
    app.acceptSpanEvents(
      [
        {
          kind: 'remark',
          organization_id: req.organizationId,
          trace_id: traceId,
          pending_root: root,
          fields: {},
          remarks,
        },
      ],
      req.id,
    );

  app.get(
    '/annotation-criteria',
    {
      schema: {
        response: { 200: z.array(CriterionSchema), ...errorResponses },
        summary: 'Annotation criteria',
        tags: ['annotations'],
      },
    },
    async (req) => (await listCriteria(app.sql, req.organizationId)).map(criterionToWire),
  );
  app.post(
    '/annotation-criteria',
    {
      config: { access: 'admin' },
      schema: {
        body: CriterionCreateSchema,
        response: { 200: CriterionSchema, 409: DetailSchema, ...errorResponses },
        summary: 'Create an annotation criterion',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const b = req.body;
      const created = await createCriterion(app.sql, req.organizationId, {
        name: b.name,
        kind: b.kind,
        description: b.description ?? null,
        min: b.min ?? null,
        max: b.max ?? null,
        options: b.options ?? null,
      });
      if (!created) throw new AppError(409, `a criterion named '${b.name}' already exists`);
      return criterionToWire(created);
    },
  );
  app.delete(
    '/annotation-criteria/:id',
    {
      config: { access: 'admin' },
      schema: {
        params: CriterionParams,
        response: { 200: DeletedSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete an annotation criterion (annotations made with it stay on their spans)',
        tags: ['annotations'],
      },
    },
    async (req) => {
      if (!(await deleteCriterion(app.sql, req.organizationId, req.params.id))) throw notFound('annotation criterion');
      return { id: req.params.id, deleted: true };
    },
  );

  app.post(
    '/trace_log/:trace_id/comments',
    {
      config: { writesSpans: true },
      schema: {
        params: TraceIdParams,
        body: CommentCreateSchema,
        response: { 200: CommentSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Comment on a span',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const span = await spanFor(req.organizationId, req.params.trace_id);
      const comment = {
        id: randomUUID(),
        comment: req.body.comment,
        user_id: userOf(req),
        created_at: formatTimestamp(new Date()),
      };
      await remark(req, req.params.trace_id, span.root_trace_id, { comments: { [comment.id]: comment } });
      return comment;
    },
  );
  app.delete(
    '/trace_log/:trace_id/comments/:comment_id',
    {
      config: { writesSpans: true },
      schema: {
        params: CommentParams,
        response: { 200: DeletedSchema, 403: DetailSchema, 404: DetailSchema, ...errorResponses },
        summary: 'Delete a comment of your own',
        tags: ['annotations'],
      },
    },
    async (req) => {
      const span = await spanFor(req.organizationId, req.params.trace_id);
      const comment = span.comments?.[req.params.comment_id];
      if (!comment) throw notFound('comment');
      if (comment.user_id !== userOf(req)) throw new AppError(403, 'only its author can delete a comment');
      await remark(req, req.params.trace_id, span.root_trace_id, { comments: { [req.params.comment_id]: null } });
      return { id: req.params.comment_id, deleted: true };
    },
  );

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
      const span = await spanFor(req.organizationId, req.params.trace_id);
      const user = userOf(req);
      const annotation = {
        created_at: formatTimestamp(new Date()),
        user_id: user,
        score: req.body.score ?? null,
        value: req.body.value ?? null,
        annotation_name: criterion.name,
      };
      await remark(req, req.params.trace_id, span.root_trace_id, {
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
      const span = await spanFor(req.organizationId, req.params.trace_id);
      await remark(req, req.params.trace_id, span.root_trace_id, {
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
