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
    /**
     * The evaluation metric that scores the same thing: how far its judge agrees with people is measured
     * on it. A value criterion's options are then read from the lowest score to the highest.
     */
    eval_metric_name: IndexedText.min(1).nullish(),
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
  eval_metric_name: z.string().nullable(),
  created_at: z.string(),
});

export const CriterionPatchSchema = z.object({ eval_metric_name: IndexedText.min(1).nullable() });

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

const Interval = z.tuple([z.number(), z.number()]).nullable();
const Figures = z.union([
  z.object({
    n: z.number(),
    spearman: z.number().nullable(),
    spearman_ci: Interval,
    mean_abs_diff: z.number().nullable(),
    mean_abs_diff_ci: Interval,
  }),
  z.object({
    n: z.number(),
    kappa: z.number().nullable(),
    kappa_ci: Interval,
    labels: z.array(z.string()),
    /** Rows by the people's value, columns by the judge's (or the second person's). */
    confusion: z.array(z.array(z.number())),
  }),
]);

export const AgreementSchema = z.object({
  criterion_id: z.string(),
  kind: z.enum(['score', 'value']),
  eval_metric_name: z.string().nullable(),
  from: z.string(),
  to: z.string(),
  /** The metric's scores against the people's (null when the criterion names no metric). */
  judge: Figures.nullable(),
  /** Two people who rated the same span, against each other. */
  people: Figures,
  /** The spans where the judge is furthest from the people, furthest first. */
  disagreements: z.array(
    z.object({
      trace_id: z.string(),
      /** Where the console opens the span: `/projects/{project_uuid}/traces/{root_trace_id}?span={trace_id}`. */
      root_trace_id: z.string(),
      project_uuid: z.string().nullable(),
      people: z.union([z.number(), z.string()]),
      judge: z.union([z.number(), z.string()]),
    }),
  ),
});
