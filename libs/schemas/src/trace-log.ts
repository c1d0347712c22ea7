import { z } from 'zod';
import { ProjectName } from './project';
import {
  Count,
  Fraction,
  IndexedText,
  JsonObject,
  OptionalName,
  OptionalUuid,
  SmallCount,
  Timestamp,
  Uuid,
} from './common';
import { EvalRuleFilter } from './eval-rule';

/** A score on a span: a name and a finite score (the Python client checks `math.isfinite`), with an optional reason. */
export const Score = z.object({
  name: z.string(),
  score: z.number(),
  reason: z.string().nullish(),
  id: z.number().int().nullish(),
});
const Image = z.object({ url: z.string(), caption: z.string().nullish() });
export const Comment = z.object({ comment: z.string(), user_id: z.string(), created_at: z.string() });
export const Annotation = z.object({
  created_at: z.string(),
  user_id: z.string(),
  score: z.number().nullish(),
  user_email_address: z.string().nullish(),
  annotation_name: z.string().nullish(),
  value: z.string().nullish(),
});

const withoutNulls = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * An LLM call's configuration. The Python client sends every member, most of them null, and when it reads
 * the span back iterates `configuration.messages` whenever the key is there: null members, and those of
 * `model_params`, say nothing and are left out (migration 00007 cleaned the rows stored before). It also
 * requires a `content` in each message, which an assistant's tool call may leave out: it is stored as null.
 */
const Configuration = JsonObject.refine((c) => typeof c.model !== 'string' || c.model.length <= 512, {
  // The model is indexed (migration 00012's covering index), so it must fit an index row as names do.
  message: 'configuration.model must be at most 512 characters',
  path: ['model'],
}).transform((c) => {
  const kept = withoutNulls(c);
  if (isObject(kept.model_params)) kept.model_params = withoutNulls(kept.model_params);
  if (Array.isArray(kept.messages))
    kept.messages = kept.messages.map((m) => (isObject(m) && !('content' in m) ? { ...m, content: null } : m));
  return kept;
});

/**
 * Every client-settable trace-log field (wire names), each nullable. A create sends any of them;
 * an update's field_name_to_value_map sends the updatable subset. The span-write queue carries
 * them in these names too, so this one schema validates requests and documents them; what it accepts is
 * what the worker stores (the worker does not check the fields again: see span-event.ts).
 */
export const TraceLogFields = z.object({
  trace_name: IndexedText.nullish(),
  inputs: JsonObject.nullish(),
  output: z.string().nullish(),
  target: z.string().nullish(),
  start_timestamp: Timestamp.nullish(),
  end_timestamp: Timestamp.nullish(),
  status: z.enum(['success', 'error']).nullish(),
  error: z.string().nullish(),
  configuration: Configuration.nullish(),
  metadata: JsonObject.nullish(),
  tags: z.array(IndexedText).nullish(),
  depth: SmallCount.nullish(),
  execution_order: SmallCount.nullish(),
  time_to_first_token: z.number().nullish(),
  latency: z.number().nullish(),
  input_tokens: Count.nullish(),
  output_tokens: Count.nullish(),
  total_tokens: Count.nullish(),
  cost: z.number().nullish(),
  output_for_eval_metrics: z.string().nullish(),
  evaluation_metric_names: z.array(z.string()).nullish(),
  scores: z.array(Score).nullish(),
  feedback_score: Fraction.nullish(),
  apply_eval_frac: Fraction.nullish(),
  log_sample_rate: Fraction.nullish(),
  deployment_id: OptionalName,
  cache_hit: z.boolean().nullish(),
  end_user_identifier: IndexedText.nullish(),
  session_id: IndexedText.nullish(),
  experiment_uuid: OptionalUuid,
  images: z.array(Image).nullish(),
  comments: z.array(Comment).nullish(),
  annotations: z.record(z.string(), z.record(z.string(), Annotation)).nullish(),
});
export type TraceLogFields = z.infer<typeof TraceLogFields>;

export const TraceLogCreateSchema = TraceLogFields.extend({
  trace_id: OptionalUuid,
  root_trace_id: OptionalUuid,
  parent_trace_id: OptionalUuid,
  project_name: ProjectName.nullish(),
  project_uuid: OptionalUuid,
  // On input, clients send the child UUIDs as strings; trees answer nested objects under the same name.
  children: z.array(z.string()).nullish(),
}).refine((v) => v.project_name || v.project_uuid, {
  message: 'project_name or project_uuid is required',
  path: ['project_name'],
});
export type TraceLogCreate = z.infer<typeof TraceLogCreateSchema>;

export const MAX_BATCH_SPANS = 1000;
/** Items are checked one by one (a bad item does not refuse its neighbours), so the envelope takes any. */
export const TraceLogBatchSchema = z.object({
  trace_logs: z
    .array(z.unknown())
    .min(1)
    .max(MAX_BATCH_SPANS)
    .describe(`up to ${MAX_BATCH_SPANS} trace logs, each as POST /trace_log takes it`),
});

export const TraceLogUpdateSchema = z.object({
  trace_id: Uuid,
  root_trace_id: OptionalUuid,
  field_name_to_value_map: TraceLogFields.partial().strict(),
});

export const FeedbackSchema = z
  .object({
    trace_id: OptionalUuid,
    inference_id: OptionalUuid,
    score: Fraction,
    name: z.string().nullish(),
    comment: z.string().nullish(),
    target: z.string().nullish(),
  })
  .refine((v) => v.trace_id || v.inference_id, { message: 'trace_id or inference_id is required', path: ['trace_id'] });

export const TIME_RANGES = ['na', '1h', '3h', '6h', '24h', '7d', '1m', '3m', '6m', '1y'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];

export const FilterSchema = z.object({
  filter_field: z.string().nullish(),
  filter_key: z.string().nullish(),
  filter_operator: z.string().nullish(),
  filter_value: z.string().nullish(),
});

/** The most filters a listing takes at once. */
const MAX_LISTING_FILTERS = 20;

export const GetTraceLogsSchema = FilterSchema.extend({
  project_name: z.string().nullish(),
  filters: z
    .array(EvalRuleFilter)
    .max(MAX_LISTING_FILTERS)
    .nullish()
    .describe(
      'conditions that must all hold on the root, each as filter_field, filter_key, filter_operator and filter_value (and with them, when given)',
    ),
  include_experiments: z
    .boolean()
    .default(true)
    .describe("whether traces logged by an experiment run are listed; the clients' listing always had them"),
  // Bounded so that the row offset always fits a bigint.
  page: z.number().int().min(1).max(1_000_000_000).default(1),
  page_size: z.number().int().min(1).max(100_000).default(20),
  time_range: z.enum(TIME_RANGES).default('na'),
  status: z.enum(['success', 'error']).nullish(),
});

export const TraceIdParams = z.object({ trace_id: Uuid });

/** LangChain run tree: only the project reference is checked here; the chainlib mapper checks the rest. */
export const ChainlibRunSchema = z
  .looseObject({ project_uuid: OptionalUuid, project_name: ProjectName.nullish() })
  .meta({ title: 'Run' });
export type ChainlibRun = z.infer<typeof ChainlibRunSchema>;
