import { z } from 'zod';
import { IndexedText, OptionalUuid, Uuid } from './common';
import { EvalRuleFilter } from './eval-rule';
import { ProjectName } from './project';

const queueFields = {
  name: IndexedText.min(1),
  /** The annotation criteria a reviewer fills in for each item. */
  criterion_ids: z.array(Uuid).max(50),
  instructions: z.string().max(20_000),
};

export const AnnotationQueueCreateSchema = z.object({
  ...queueFields,
  project_name: ProjectName.nullish(),
  project_uuid: OptionalUuid,
  criterion_ids: queueFields.criterion_ids.default([]),
  instructions: queueFields.instructions.default(''),
});

export const AnnotationQueuePatchSchema = z.object(queueFields).partial();

export const AnnotationQueueParams = z.object({ id: Uuid });
export const AnnotationQueueItemParams = z.object({ id: Uuid, item_id: z.coerce.number().int().positive() });

/** Traces added by id, or a random sample of the project's traces that match every filter. */
export const AnnotationQueueItemsSchema = z.union([
  z.object({ trace_ids: z.array(Uuid).min(1).max(10_000) }).strict(),
  z.object({ filters: z.array(EvalRuleFilter).max(20), sample_size: z.number().int().min(1).max(10_000) }).strict(),
]);

export const AnnotationQueueSchema = z.object({
  id: z.string(),
  project_uuid: z.string(),
  name: z.string(),
  criterion_ids: z.array(z.string()),
  instructions: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Items by state; an item whose lease lapsed counts as pending. */
  counts: z.object({ pending: z.number(), in_review: z.number(), done: z.number(), skipped: z.number() }),
  /** Each reviewer's finished items. */
  reviewers: z.array(z.object({ reviewer: z.string(), done: z.number(), skipped: z.number() })),
});

/** The item leased to the caller: theirs until `lease_expires_at`, renewed while they work. */
export const LeasedItemSchema = z.object({ item_id: z.number(), trace_id: z.string(), lease_expires_at: z.string() });
