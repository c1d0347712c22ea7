import { z } from 'zod';
import {
  Fraction,
  IndexedText,
  JsonObject,
  ModelName,
  OptionalName,
  OptionalUuid,
  ProviderText,
  RequestId,
  Uuid,
} from './common';
import { ProjectName } from './project';

const MESSAGE_ROLES = ['system', 'user', 'assistant', 'example_user', 'example_assistant', 'function', 'tool'] as const;

const MessageSchema = z.object({
  role: z.enum(MESSAGE_ROLES),
  content: z.string().nullish(),
  name: z.string().nullish(),
});
export type Message = z.infer<typeof MessageSchema>;

const FunctionSchema = z.object({
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: JsonObject.nullish(),
});

/** Providers' names for api.md's model parameters: accepted beside them, stored and answered under api.md's. */
const MODEL_PARAM_ALIASES = {
  temperature: 'temp',
  max_tokens: 'max_length',
  max_completion_tokens: 'max_length',
} as const;
type Alias = keyof typeof MODEL_PARAM_ALIASES;

const Temp = z.number().min(0).max(2).nullish();
const MaxLength = z.number().int().positive().nullish();

const KNOWN_PARAMS = {
  temp: Temp,
  max_length: MaxLength,
  top_p: z.number().min(0).max(1).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  response_format: z
    .object({ type: z.enum(['text', 'json_object', 'json_schema']), json_schema: JsonObject.nullish() })
    .nullish(),
  model: ModelName.nullish(),
};
const PARAM_NAMES = new Set([...Object.keys(KNOWN_PARAMS), ...Object.keys(MODEL_PARAM_ALIASES)]);
const KNOWN_LIST =
  'temp (or temperature), max_length (or max_tokens, max_completion_tokens), top_p, frequency_penalty, presence_penalty, response_format, model';

/**
 * Model parameters. A parameter that is not known is refused, never dropped: a prompt version saved without
 * it would call the model differently from what its author asked, and show no difference from the last one.
 * One given as null is not given (the Python client sends `safe_prompt: null`, as it sends every member).
 */
export const ModelParamsSchema = z
  .looseObject({
    ...KNOWN_PARAMS,
    temperature: Temp.describe('the same as temp'),
    max_tokens: MaxLength.describe('the same as max_length'),
    max_completion_tokens: MaxLength.describe('the same as max_length'),
  })
  .describe(
    `Known parameters: ${KNOWN_LIST}; the providers' names are stored under api.md's (temperature as temp). ` +
      'Any other parameter is refused with 422 unless it is null.',
  )
  .transform((given, ctx) => {
    const params: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(given)) {
      if (value == null) continue;
      if (!PARAM_NAMES.has(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `unknown model parameter ${key}; known: ${KNOWN_LIST}` });
        continue;
      }
      const name = MODEL_PARAM_ALIASES[key as Alias] ?? key;
      if (name in params && params[name] !== value) {
        const other = Object.keys(given).find((k) => k !== key && (MODEL_PARAM_ALIASES[k as Alias] ?? k) === name);
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} and ${other} are the same parameter: give one` });
        continue;
      }
      params[name] = value;
    }
    return params as z.output<z.ZodObject<typeof KNOWN_PARAMS>>;
  });
export type ModelParams = z.infer<typeof ModelParamsSchema>;

const LlmConfigurationSchema = z.object({
  model: ModelName.nullish(),
  provider: ProviderText.nullish(),
  model_params: ModelParamsSchema.nullish(),
  messages: z.array(MessageSchema).nullish(),
  history: z.array(MessageSchema).nullish(),
  functions: z.array(FunctionSchema).nullish(),
  function_call: z.string().nullish(),
});
export type LlmConfiguration = z.infer<typeof LlmConfigurationSchema>;

export const CompletionRequestSchema = z.object({
  inputs: z.record(z.string(), z.unknown()).nullish(),
  llm_inputs: z.record(z.string(), z.unknown()).nullish(),
  llm_configuration: LlmConfigurationSchema.nullish(),
  project_name: ProjectName.nullish(),
  project_uuid: OptionalUuid,
  experiment_uuid: OptionalUuid,
  parent_trace_id: OptionalUuid,
  root_trace_id: OptionalUuid,
  end_user_identifier: IndexedText.nullish(),
  deployment_id: OptionalName,
  metadata: JsonObject.nullish(),
  tags: z.array(IndexedText).nullish(),
  target: z.string().nullish(),
  trace_id: OptionalUuid,
  inference_id: OptionalUuid,
  trace_name: IndexedText.nullish(),
  name: IndexedText.nullish(),
  provider_api_key: z.string().min(1).nullish(),
  cache: z.boolean().nullish(),
  log_omit_inputs: z.boolean().nullish(),
  log_omit_outputs: z.boolean().nullish(),
  log_omit: z.boolean().nullish(),
  log_sample_rate: Fraction.nullish(),
  eval_metric_ids: z.array(z.union([z.number().int(), z.string()])).nullish(),
  stream: z.boolean().nullish(),
});
export type CompletionRequest = z.infer<typeof CompletionRequestSchema>;

/**
 * The template inputs of a completion or deployed-prompt request, and the field they came from: `inputs`,
 * api.md's name, over `llm_inputs`, the older name the clients still send. Both routes read them here, so a
 * body with both fills the same templates on each.
 */
export function templateInputs(body: {
  inputs?: Record<string, unknown> | null;
  llm_inputs?: Record<string, unknown> | null;
}): { field: 'inputs' | 'llm_inputs'; inputs: Record<string, unknown> | null } {
  if (body.inputs == null && body.llm_inputs != null) return { field: 'llm_inputs', inputs: body.llm_inputs };
  return { field: 'inputs', inputs: body.inputs ?? null };
}

export const DeployedPromptRequestSchema = z.object({
  deployment_id: z.string().min(1),
  llm_inputs: z.record(z.string(), z.unknown()).nullish(),
  inputs: z.record(z.string(), z.unknown()).nullish(),
});

export const PromptVersionCreateSchema = z.object({
  name: z.string().min(1).max(255),
  messages: z.array(MessageSchema).min(1),
  model: ModelName,
  provider: ProviderText,
  model_params: ModelParamsSchema.nullish(),
  functions: z.array(FunctionSchema).nullish(),
  function_call: z.string().nullish(),
});
export type PromptVersionCreate = z.infer<typeof PromptVersionCreateSchema>;

export const DeploymentCreateSchema = z.object({
  prompt_version_id: z.number().int().positive(),
  deployment_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only')
    .nullish(),
});

const ProviderName = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'lower-case letters, digits, _ and - only');

const ProviderLimit = z.number().int().positive().max(100_000_000).nullish();

export const ProviderKeyCreateSchema = z.object({
  provider: ProviderName,
  api_key: z.string().min(1).max(4096),
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).nullish(),
  /** The key's limits, kept to across all workers (unset: none): requests at once, a minute, tokens a minute. */
  max_concurrent: ProviderLimit,
  rpm: ProviderLimit,
  tpm: ProviderLimit,
});

/** A provider-neutral chat request: what a provider adapter sends and what the cache key is made of. */
const LlmRequestSchema = z.object({
  provider: z.string().min(1),
  model: z.string().min(1),
  messages: z.array(
    z.object({
      role: z.enum(['system', 'user', 'assistant', 'function', 'tool']),
      content: z.string(),
      name: z.string().optional(),
    }),
  ),
  params: z.object({
    temperature: z.number().optional(),
    max_tokens: z.number().int().optional(),
    top_p: z.number().optional(),
    frequency_penalty: z.number().optional(),
    presence_penalty: z.number().optional(),
    response_format: z
      .object({ type: z.enum(['text', 'json_object', 'json_schema']), json_schema: JsonObject.optional() })
      .optional(),
  }),
  tools: z
    .array(z.object({ name: z.string(), description: z.string().optional(), parameters: JsonObject.optional() }))
    .optional(),
  tool_choice: z.union([z.enum(['auto', 'none']), z.object({ name: z.string() })]).optional(),
});
export type LlmRequest = z.infer<typeof LlmRequestSchema>;

/** What a provider call returns (and what the completion cache keeps). */
export const LlmResultSchema = z.object({
  content: z.string(),
  model: z.string(),
  /** All prompt tokens, cached ones included; null when the provider reported no usage. */
  input_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  /** Prompt tokens read from / written to the provider's prompt cache (priced differently). */
  cache_read_tokens: z.number().int().optional(),
  cache_write_tokens: z.number().int().optional(),
});
export type LlmResult = z.infer<typeof LlmResultSchema>;

/** What the completion's trace log needs beyond the call itself. */
const CompletionLogSchema = z.object({
  trace_name: z.string(),
  project_id: Uuid,
  inputs: z.record(z.string(), z.unknown()).nullish(),
  deployment_id: z.string().nullish(),
  parent_trace_id: Uuid.nullish(),
  root_trace_id: Uuid.nullish(),
  experiment_uuid: Uuid.nullish(),
  end_user_identifier: z.string().nullish(),
  metadata: JsonObject.nullish(),
  tags: z.array(z.string()).nullish(),
  target: z.string().nullish(),
  omit_inputs: z.boolean(),
  omit_outputs: z.boolean(),
  sample_rate: Fraction.nullish(),
  // Optional while jobs from before it drain.
  evaluation_metric_names: z.array(z.string()).optional(),
});

/** A completion names a route as its model: `route:<name>`. */
export const ROUTE_MODEL_PREFIX = 'route:';
/** The failures on which a route moves on to its next target. */
const RETRY_ON = ['429', '5xx', 'timeout'] as const;
export type RetryOn = (typeof RETRY_ON)[number];

const RouteTargetSchema = z.object({
  provider: ProviderName,
  model: ModelName,
  /** Loadbalance: this target's share, relative to the others' (default 1). */
  weight: z.number().positive().max(1_000_000).optional(),
  /** The saved provider key (named by its `provider`) whose key and base URL this target uses. */
  provider_key: ProviderName.optional(),
});
export type RouteTarget = z.infer<typeof RouteTargetSchema>;

export const RouteCreateSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _, . and - only'),
  strategy: z.enum(['fallback', 'loadbalance']),
  targets: z.array(RouteTargetSchema).min(1).max(16),
  // `429` may come as a number, as in the documentation's example.
  retry_on: z
    .array(z.union([z.literal(429).transform(() => '429' as const), z.enum(RETRY_ON)]))
    .max(RETRY_ON.length)
    .default([...RETRY_ON]),
});
export type RouteCreate = z.output<typeof RouteCreateSchema>;

export const RouteSchema = z.object({
  name: z.string(),
  strategy: z.enum(['fallback', 'loadbalance']),
  targets: z.array(RouteTargetSchema),
  retry_on: z.array(z.enum(RETRY_ON)),
  created_at: z.string(),
  updated_at: z.string(),
});

/**
 * A provider account as the gateway keeps to its limits: one provider with one key (and base URL), by a
 * digest of them, never the key itself. A call whose lane has limits, or that the provider refused for
 * overload a moment ago, waits in the lane's own queue.
 */
const LaneSchema = z.object({
  id: z.string().regex(/^[a-z0-9_-]{1,80}$/),
  provider: z.string(),
  /** Where its key comes from: the request, the organization's saved keys, or the server's environment. */
  key: z.enum(['request', 'saved', 'server']),
  max_concurrent: z.number().int().positive().nullable(),
  rpm: z.number().int().positive().nullable(),
  tpm: z.number().int().positive().nullable(),
});
export type Lane = z.infer<typeof LaneSchema>;

/**
 * How far a routed completion got before it waited in a target's lane: the order its targets are tried
 * in, the position of the one to call next, and the targets that failed (logged as child spans, and named
 * in the error if none answers).
 */
const RouteProgressSchema = z.object({
  order: z.array(z.number().int().min(0).max(15)).max(16),
  next: z.number().int().min(0).max(15),
  failed: z
    .array(
      z.object({
        target: z.number().int().min(0).max(15),
        error: z.string(),
        failure: z.enum(RETRY_ON).nullable(),
        latency: z.number().min(0),
        started_ms: z.number().int().positive(),
      }),
    )
    .max(16),
});
export type RouteProgress = z.infer<typeof RouteProgressSchema>;

export const CompletionJobSchema = z.object({
  /** The pub/sub channel the API listens on for this job's chunks and result. */
  reply_to: z.string().min(1),
  organization_id: Uuid,
  trace_id: Uuid,
  stream: z.boolean(),
  cache: z.boolean(),
  request: LlmRequestSchema,
  /** The request's own provider key, sealed with SECRETS_KEY when the server has one. */
  provider_api_key: z.union([z.object({ sealed: z.string() }), z.object({ plain: z.string() })]).optional(),
  log: CompletionLogSchema,
  request_id: RequestId,
  /** The route the request named as its model: the gateway calls its targets instead of `request`'s. */
  route: RouteCreateSchema.omit({ retry_on: true })
    .extend({ retry_on: z.array(z.enum(RETRY_ON)) })
    .optional(),
  /** Set when a routed job waits in one of its targets' lanes. */
  route_progress: RouteProgressSchema.optional(),
  /** When the caller stops waiting (epoch ms): the job is not started after it. */
  deadline_ms: z.number().int().positive().optional(),
  /** Set when the job waits in its lane's queue: the lane, and when it was first queued there (epoch ms). */
  lane: LaneSchema.optional(),
  lane_queued_ms: z.number().int().positive().optional(),
  /** The API key that made the call, for its budgets (optional while jobs from before it drain). */
  api_key_id: Uuid.optional(),
  /** Times the provider refused this job for overload: the backoff grows with them when it gave no Retry-After. */
  overloads: z.number().int().min(0).optional(),
});
export type CompletionJob = z.infer<typeof CompletionJobSchema>;

/** The completion response of api.md, plus inference_id (equal to trace_id). */
export const CompletionResponseSchema = z.object({
  content: z.string(),
  latency: z.number(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost: z.number(),
  model: z.string(),
  provider: z.string(),
  cache_hit: z.boolean(),
  status: z.enum(['success', 'error']),
  start_timestamp: z.string(),
  end_timestamp: z.string(),
  trace_id: z.string(),
  inference_id: z.string(),
  error: z.string().nullable(),
});
export type CompletionResponse = z.infer<typeof CompletionResponseSchema>;
