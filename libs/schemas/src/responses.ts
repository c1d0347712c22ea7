import { z } from 'zod';
import { ClientTraceLogPageSchema, ClientTraceLogSchema } from './client-responses';
import { ExperimentStatus, PinnedStat } from './experiment';
import { Score } from './trace-log';

// Response shapes, for the OpenAPI document. Responses are serialized as they are; these describe them.

export const DetailSchema = z.object({ detail: z.string() }).meta({ title: 'Error' });
const ValidationErrorSchema = z
  .object({
    detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })),
  })
  .meta({ title: 'ValidationError' });

/** The error answers every authenticated route may give. */
export const errorResponses = {
  401: DetailSchema.describe('missing or unknown API key'),
  422: ValidationErrorSchema.describe('invalid body or parameter'),
  503: DetailSchema.describe('a dependency is unavailable, or accepted writes are still being applied'),
};

export const ProjectSchema = z.object({
  uuid: z.string(),
  name: z.string(),
  created_at: z.string(),
  was_created: z.boolean(),
});
export const AcceptedSpanSchema = z.object({
  trace_id: z.string(),
  sampled: z.boolean().optional(),
  spans: z.number().optional(),
});
const ValidationDetail = ValidationErrorSchema.shape.detail;
export const BatchResultSchema = z.object({
  results: z.array(
    z.object({
      index: z.number(),
      status: z.number().describe('200 accepted, 404 unknown project_uuid, 422 invalid (see detail)'),
      trace_id: z.string().optional(),
      sampled: z.boolean().optional(),
      detail: z.union([ValidationDetail, z.string()]).optional(),
    }),
  ),
});

/** A trace log as answered: wire field names, `YYYY-MM-DD HH:MM:SS` timestamps, nested children. */
export const TraceLogTreeSchema = z
  .looseObject({
    trace_id: z.string(),
    root_trace_id: z.string(),
    parent_trace_id: z.string(),
    trace_name: z.string().nullable(),
    project_uuid: z.string().nullable(),
    project_name: z.string().nullable(),
    start_timestamp: z.string().describe('when the span started; one sent without reads as when it was first stored'),
    end_timestamp: z.string().nullable(),
    status: z.string().nullable(),
    depth: z.number().nullable(),
    execution_order: z.number().nullable(),
    latency: z.number().nullable(),
    total_tokens: z.number().nullable(),
    cost: z.number().nullable(),
    scores: z.array(Score),
    feedback_score: z.number().nullable(),
    children_ids: z.array(z.string()),
    children: z.array(z.looseObject({ trace_id: z.string() })).describe('nested trace logs of the same shape'),
  })
  .meta({ title: 'TraceLogTree' });

const TraceLogPageSchema = z.object({
  total: z.number(),
  page: z.number(),
  total_pages: z.number(),
  page_size: z.number(),
  results: z.array(TraceLogTreeSchema),
});

// Tree responses come in two dialects, chosen by the request's x-sdk-language header.
const DIALECTS =
  "api.md's shape (TraceLogTree); with an x-sdk-language header, as the official clients send, theirs (ClientTraceLogTree): " +
  'nested spans in children_logs, child ids in children, fields without a value left out';
export const TraceTreeResponseSchema = z.union([TraceLogTreeSchema, ClientTraceLogSchema]).describe(DIALECTS);
export const TraceTreeListResponseSchema = z
  .union([z.array(TraceLogTreeSchema), z.array(ClientTraceLogSchema)])
  .describe(DIALECTS);
export const TraceLogPageResponseSchema = z.union([TraceLogPageSchema, ClientTraceLogPageSchema]).describe(DIALECTS);

export const ExperimentSchema = z.object({
  uuid: z.string(),
  name: z.string(),
  project_uuid: z.string(),
  run_name: z.string(),
  is_public: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  status: ExperimentStatus,
  num_samples: z.number(),
  pinned_stats: z.array(PinnedStat),
});
export type Experiment = z.infer<typeof ExperimentSchema>;

export const ExperimentStatsSchema = z.object({
  parent_trace_stats: z.array(
    z.object({
      trace_id: z.string(),
      latency: z.number().nullable(),
      input_tokens: z.number(),
      output_tokens: z.number(),
      total_tokens: z.number(),
      cost: z.number(),
      scores: z.array(Score),
    }),
  ),
});

export const DatasetCreatedSchema = z.object({
  id: z.number(),
  last_updated_at: z.string(),
  test_case_ids: z.array(z.number()),
});

/** `GET /api/svc/v1/`: every value is a string, as api.md says. */
export const HealthSchema = z.record(z.string(), z.string());
export const FeedbackAcceptedSchema = z.object({ trace_id: z.string() });
export const TestCaseIdsSchema = z
  .array(z.number().int())
  .describe('the ids of the added test cases, in the order given');
export const PromptVersionSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  version_number: z.number().int(),
  messages: z.array(z.record(z.string(), z.unknown())),
  model: z.string(),
  provider: z.string(),
  model_params: z.record(z.string(), z.unknown()).nullish(),
  functions: z.array(z.record(z.string(), z.unknown())).nullish(),
  function_call: z.string().nullish(),
  created_at: z.string(),
});
export const DeploymentSchema = z.object({
  deployment_id: z.string(),
  updated_at: z.string(),
  prompt_version: PromptVersionSchema,
});
const MovedVersion = z
  .object({ id: z.number().int(), name: z.string(), version_number: z.number().int() })
  .describe('the prompt version, by id, name and number');
export const DeploymentHistorySchema = z.object({
  deployment_id: z.string(),
  moves: z
    .array(
      z.object({
        at: z.string().describe('when the move was made (ISO 8601)'),
        by: z
          .object({ label: z.string().nullable(), role: z.string() })
          .describe('the API key that made it: its label and role at the time'),
        from: MovedVersion.nullable().describe('null when the move created the deployment'),
        to: MovedVersion,
      }),
    )
    .describe('newest first, the 100 latest, as long as the audit log keeps them (RETENTION_DAYS)'),
});
export const ProviderKeySchema = z.object({
  provider: z.string(),
  api_key: z.string().describe('the last 4 characters only'),
  base_url: z.string().nullable(),
  max_concurrent: z.number().int().nullable(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  updated_at: z.string(),
});
export const EvalMetricSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  config: z.record(z.string(), z.unknown()),
  version: z.number().int().describe('1 when created; each change of its configuration adds one'),
  created_at: z.string(),
  updated_at: z.string().describe('when its current version was made'),
});
/** One version of a metric's configuration, kept after later edits. */
export const EvalMetricVersionSchema = z.object({
  version: z.number().int(),
  type: z.string(),
  config: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
export const DeletedSchema = z.object({ deleted: z.boolean() }).loose();
