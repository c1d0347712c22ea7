import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { formatTimestamp } from '@sightline/core';
import {
  CommentCreateSchema,
  CommentParams,
  CommentSchema,
  DeletedSchema,
  DetailSchema,
  errorResponses,
  TraceIdParams,
} from '@sightline/schemas';
import { AppError, notFound } from '../../errors';
import { remark, spanFor, userOf } from './span-remarks';

/** Comments on a span, in its `comments`. */
export default async function commentRoutes(base: FastifyInstance) {
  const app = base.withTypeProvider<ZodTypeProvider>();

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
      const span = await spanFor(base, req.organizationId, req.params.trace_id);
      const comment = {
        id: randomUUID(),
        comment: req.body.comment,
        user_id: userOf(req),
        created_at: formatTimestamp(new Date()),
      };
      await remark(base, req, req.params.trace_id, span.root_trace_id, { comments: { [comment.id]: comment } });
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
      const span = await spanFor(base, req.organizationId, req.params.trace_id);
      const comment = span.comments?.[req.params.comment_id];
      if (!comment) throw notFound('comment');
      if (comment.user_id !== userOf(req)) throw new AppError(403, 'only its author can delete a comment');
      await remark(base, req, req.params.trace_id, span.root_trace_id, { comments: { [req.params.comment_id]: null } });
      return { id: req.params.comment_id, deleted: true };
    },
  );
}
