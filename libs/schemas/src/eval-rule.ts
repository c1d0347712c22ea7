import { z } from 'zod';
import { FILTER_OPERATORS } from '@sightline/core';
import { IndexedText, OptionalUuid, Timestamp, Uuid } from './common';
import { ProjectName } from './project';

/** One of get_trace_logs' filters, as a rule holds it; every filter of a rule must hold on the trace's root. */
export const EvalRuleFilter = z.object({
  field: z.string().min(1).max(512),
  key: z.string().max(512).nullish(),
  operator: z.enum(FILTER_OPERATORS),
  // get_trace_logs takes the value as text; a number or a boolean here means the same.
  value: z
    .union([z.string().max(10_000), z.number(), z.boolean()])
    .transform(String)
    .nullish(),
});
export type EvalRuleFilter = z.infer<typeof EvalRuleFilter>;

/** Which spans of a settled trace a rule scores: its root, or every span of that name. */
export const EvalRuleTarget = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('root') }),
  z.object({ kind: z.literal('span'), span_name: IndexedText.min(1) }),
]);
export type EvalRuleTarget = z.infer<typeof EvalRuleTarget>;

/** A rule that feeds a queue: the traces it scores below a threshold, or fails to score. */
export const RuleQueueFeed = z
  .object({
    queue_id: Uuid,
    on_result: z.object({ metric_name: IndexedText.min(1), below: z.number() }).nullish(),
    on_error: z.boolean().nullish(),
  })
  .refine((f) => f.on_result || f.on_error, { message: 'give on_result, on_error or both', path: ['on_result'] });
export type RuleQueueFeed = z.infer<typeof RuleQueueFeed>;

const ruleFields = {
  name: IndexedText.min(1),
  metric_names: z.array(IndexedText.min(1)).min(1).max(20),
  sample_rate: z.number().min(0).max(1),
  filters: z.array(EvalRuleFilter).max(20),
  target: EvalRuleTarget,
  settle_seconds: z.number().int().min(0).max(86_400),
  /** USD of judge calls a UTC day; past it the rule pauses until the next day. */
  daily_cost_limit: z.number().positive().nullish(),
  reevaluate_on_update: z.boolean(),
  enabled: z.boolean(),
  annotation_queue: RuleQueueFeed.nullish(),
};

export const EvalRuleCreateSchema = z.object({
  ...ruleFields,
  project_name: ProjectName.nullish(),
  project_uuid: OptionalUuid,
  sample_rate: ruleFields.sample_rate.default(1),
  filters: ruleFields.filters.default([]),
  target: ruleFields.target.default({ kind: 'root' }),
  settle_seconds: ruleFields.settle_seconds.default(10),
  reevaluate_on_update: ruleFields.reevaluate_on_update.default(false),
  enabled: ruleFields.enabled.default(true),
});
export type EvalRuleCreate = z.infer<typeof EvalRuleCreateSchema>;

/** A rule's fields to change; its project stays. */
export const EvalRulePatchSchema = z.object(ruleFields).partial();
export type EvalRulePatch = z.infer<typeof EvalRulePatchSchema>;

export const EvalRuleParams = z.object({ id: Uuid });

/** `POST /eval-rules/{id}/backfill`: the rule run over the stored traces that started in [from, to). */
export const EvalBackfillCreateSchema = z
  .object({ from: Timestamp, to: Timestamp })
  .refine((r) => r.from < r.to, { message: 'from must be before to', path: ['to'] });

export const EvalBackfillParams = z.object({ id: Uuid, backfill_id: Uuid });

export const EvalBackfillSchema = z.object({
  id: z.string(),
  status: z.enum(['running', 'done', 'cancelled']),
  from: z.string(),
  to: z.string(),
  /** Root traces in the range, and those walked so far (each evaluated, or passed over by the rule's filters or sampling). */
  total: z.number().int(),
  done: z.number().int(),
  /** Judge spend of the evaluations it made (USD); a judge's evaluations finish after its walk does. */
  cost: z.number(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});

export const EvalBackfillJobSchema = z.object({ organization_id: Uuid, backfill_id: Uuid });

export const EvalRuleSchema = z.object({
  id: z.string(),
  project_uuid: z.string(),
  ...ruleFields,
  daily_cost_limit: z.number().nullable(),
  annotation_queue: RuleQueueFeed.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Judge spend of the current UTC day (USD). */
  cost_today: z.number(),
  /** Set while the day's spend has reached daily_cost_limit: when the rule runs again. */
  paused_until: z.string().nullable(),
  /** Target spans evaluated, and queued for evaluation. */
  runs: z.object({ done: z.number().int(), queued: z.number().int() }),
  /** The latest backfills, newest first. */
  backfills: z.array(EvalBackfillSchema),
});

/** `POST /eval-rules/preview`: a rule as it would be saved, before saving it. */
export const EvalRulePreviewRequestSchema = EvalRuleCreateSchema.pick({
  project_name: true,
  project_uuid: true,
  metric_names: true,
  sample_rate: true,
  filters: true,
});

export const EvalRulePreviewSchema = z.object({
  /** Ended production traces of the last 24 hours whose root matches the filters, and those the sample rate keeps. */
  matching_24h: z.number().int(),
  sampled_24h: z.number().int(),
  /** The newest of them, to try the metrics on (`POST /eval-metrics/try`). */
  example_trace_id: z.string().nullable(),
  /** The rule's metrics that call a judge, and their spend at the last day's traffic (null without a week of judge calls to price them by). */
  judge_metrics: z.array(z.string()),
  estimated_daily_cost: z.number().nullable(),
});

/** A trace of a project that has live rules was written: run the rules once it has settled. */
export const TraceSettleJobSchema = z.object({
  organization_id: Uuid,
  project_id: Uuid,
  root_trace_id: Uuid,
});
export type TraceSettleJob = z.infer<typeof TraceSettleJobSchema>;
