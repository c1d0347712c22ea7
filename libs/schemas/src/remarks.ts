import { z } from 'zod';
import { IndexedText, Uuid } from './common';

export const CriterionCreateSchema = z
  .object({
    name: IndexedText.min(1),
    kind: z
      .enum(['score', 'value'])
      .describe('score: a number (within min and max when given); value: text (one of options when given)'),
    description: z.string().max(2000).nullish(),
    min: z.number().finite().nullish(),
    max: z.number().finite().nullish(),
    options: z.array(IndexedText.min(1)).min(1).max(100).nullish(),
  })
  .refine((c) => c.min == null || c.max == null || c.min <= c.max, {
    message: 'min must not exceed max',
    path: ['min'],
  })
  .refine((c) => c.kind === 'score' || (c.min == null && c.max == null), {
    message: 'min and max are for score criteria',
    path: ['min'],
  })
  .refine((c) => c.kind === 'value' || c.options == null, {
    message: 'options are for value criteria',
    path: ['options'],
  });

export const CriterionSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['score', 'value']),
  description: z.string().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  options: z.array(z.string()).nullable(),
  created_at: z.string(),
});

export const CriterionParams = z.object({ id: Uuid });
export const CommentCreateSchema = z.object({ comment: z.string().trim().min(1).max(20_000) });
export const CommentSchema = z.object({
  id: z.string(),
  comment: z.string(),
  user_id: z.string(),
  created_at: z.string(),
});
export const CommentParams = z.object({ trace_id: Uuid, comment_id: Uuid });
export const AnnotationParams = z.object({ trace_id: Uuid, criterion_id: Uuid });
export const AnnotationSetSchema = z.object({
  score: z.number().finite().nullish(),
  value: z.string().max(2000).nullish(),
});
export const AnnotationSchema = z.object({
  created_at: z.string(),
  user_id: z.string(),
  score: z.number().nullable(),
  value: z.string().nullable(),
  annotation_name: z.string(),
});
