import { z } from 'zod';
import { regexError, type EvalResult as CoreEvalResult } from '@sightline/core';
import { IndexedText, JsonObject, ModelName, PathId, ProviderText, RequestId, Uuid } from './common';
import { ModelParamsSchema } from './completion';

const Judge = z.object({
  /** With {{output}}, {{target}} and {{inputs.<name>}} placeholders. */
  prompt_template: z.string().min(1),
  provider: ProviderText,
  model: ModelName,
  // The completions' own parameters: a judge saved with `temperature` must not run at the provider's default.
  model_params: ModelParamsSchema.nullish(),
  cache: z.boolean().nullish(),
});

// Each type with its config, checked as the worker will run it; a metric adds its name (fixed once created).
const Levenshtein = z.object({ type: z.literal('levenshtein'), config: z.object({}).nullish() });
const ExactMatch = z.object({
  type: z.literal('exact_match'),
  config: z.object({ case_sensitive: z.boolean().nullish() }).nullish(),
});
const Contains = z.object({
  type: z.literal('contains'),
  config: z.object({ value: z.string().nullish(), case_sensitive: z.boolean().nullish() }).nullish(),
});
const RegexMatch = z.object({
  type: z.literal('regex_match'),
  config: z
    .object({
      pattern: z.string().min(1).max(1000),
      flags: z
        .string()
        .regex(/^[imsu]*$/, 'flags may only be i, m, s and u')
        .nullish(),
    })
    .superRefine((c, ctx) => {
      // Checked as the worker will run it: on RE2, whose flags are checked above.
      const problem = regexError(c.pattern, c.flags?.replace(/[^imsu]/g, ''));
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['pattern'] });
    }),
});
const JsonValid = z.object({ type: z.literal('json_valid'), config: z.object({}).nullish() });
const JsonSchema = z.object({ type: z.literal('json_schema'), config: z.object({ schema: JsonObject }) });
const LlmJudge = z.object({ type: z.literal('llm_judge'), config: Judge });

const Named = { name: IndexedText.min(1) };
export const EvalMetricCreateSchema = z.discriminatedUnion('type', [
  Levenshtein.extend(Named),
  ExactMatch.extend(Named),
  Contains.extend(Named),
  RegexMatch.extend(Named),
  JsonValid.extend(Named),
  JsonSchema.extend(Named),
  LlmJudge.extend(Named),
]);
/**
 * A metric's new configuration (`PATCH /eval-metrics/{id}`), checked as a created one's: the type must be
 * the metric's own, the name stays (spans name the metric by it).
 */
export const EvalMetricUpdateSchema = z.discriminatedUnion('type', [
  Levenshtein,
  ExactMatch,
  Contains,
  RegexMatch,
  JsonValid,
  JsonSchema,
  LlmJudge,
]);
export type EvalMetricUpdate = z.infer<typeof EvalMetricUpdateSchema>;
export type EvalMetricCreate = z.infer<typeof EvalMetricCreateSchema>;

export const EvalMetricParams = z.object({ id: PathId });

/** A metric as it would be created, tried on an output (and target and inputs) without saving it. */
export const EvalMetricTrySchema = z.object({
  metric: EvalMetricCreateSchema,
  output: z.string().max(1_000_000),
  target: z.string().max(1_000_000).nullish(),
  inputs: z.record(z.string(), z.unknown()).nullish(),
});

/**
 * One evaluation result of a span, by metric name: a score with its reason, or why there is none; with the
 * version of the metric that made it (none on results written before metrics had versions, and on a try).
 */
const MetricVersion = { metric_version: z.number().int().min(1).optional() };
export const EvalResult = z.union([
  z.object({ score: z.number(), reason: z.string().nullish(), ...MetricVersion }),
  z.object({ error: z.string(), ...MetricVersion }),
]) satisfies z.ZodType<CoreEvalResult>;
export type EvalResult = z.infer<typeof EvalResult>;

export const EvalJobSchema = z.object({
  organization_id: Uuid,
  trace_id: Uuid,
  metric_names: z.array(z.string()).min(1),
  /** The span's entry in its organization's pending set: removed once the results are written. */
  pending_member: z.string().optional(),
  /** The evaluation rule (and its run's generation) that queued this job; none when the span names its metrics. */
  rule: z.object({ id: Uuid, generation: z.number().int().min(0), backfill: Uuid.optional() }).optional(),
  /** Results of earlier attempts, so that a retry re-runs only the metrics that failed. */
  completed: z.array(z.string()).optional(),
  request_id: RequestId,
});
export type EvalJob = z.infer<typeof EvalJobSchema>;
