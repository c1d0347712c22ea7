import { z } from 'zod';
import { CompletionResponseSchema } from './completion';
import { StoredTestCaseSchema } from './dataset';
import { ExperimentStatus, PinnedStat } from './experiment';
import { Score } from './trace-log';

// What the official clients read back: one schema per response, as strict as the Python client's parser
// (cattrs, plus its own tree reader) is. A null where it iterates, int()-converts or validates crashes the
// client; unknown keys are ignored, and a missing key takes the client's default. Requests that send
// `x-sdk-language` get trees in this dialect; tests check every answer the clients get against these.

const Text = z.string().nullish();
const Real = z.number().nullish();
const Int = z.number().int().nullish();

/**
 * One span of a tree, without its nested spans, which `children_logs` holds and which are each checked as
 * spans in turn. The four ids and the start are required strings; `depth` and `execution_order` are left
 * out rather than null (the client calls int() on them); collections are absent or of their type.
 */
export const ClientTraceLogSchema = z
  .looseObject({
    trace_id: z.string(),
    parent_trace_id: z.string(),
    root_trace_id: z.string(),
    start_timestamp: z.string(),
    end_timestamp: Text,
    depth: z.number().int().optional(),
    execution_order: z.number().int().optional(),
    // The client structures messages one by one and model_params as an object: neither may be null.
    configuration: z
      .looseObject({
        messages: z.array(z.looseObject({ role: z.string().optional(), content: z.string().nullable() })).optional(),
        model_params: z.looseObject({}).optional(),
      })
      .nullish(),
    inputs: z.record(z.string(), z.unknown()).nullish(),
    metadata: z.record(z.string(), z.unknown()).nullish(),
    tags: z.array(z.string()).nullish(),
    evaluation_metric_names: z.array(z.string()).nullish(),
    scores: z.array(Score).optional(),
    images: z.array(z.looseObject({ url: z.string(), caption: Text })).optional(),
    comments: z.array(z.looseObject({ comment: z.string(), user_id: z.string(), created_at: z.string() })).optional(),
    // Criterion ids go through int().
    annotations: z
      .record(
        z.string().regex(/^\d+$/),
        z.record(
          z.string(),
          z.looseObject({ created_at: z.string(), user_id: z.string(), score: z.number().nullable() }),
        ),
      )
      .optional(),
    ...Object.fromEntries(
      [
        'output',
        'target',
        'organization_id',
        'project_uuid',
        'project_name',
        'error',
        'status',
        'deployment_id',
        'output_for_eval_metrics',
        'trace_name',
        'end_user_identifier',
        'session_id',
        'experiment_uuid',
      ].map((k) => [k, Text]),
    ),
    ...Object.fromEntries(
      ['latency', 'time_to_first_token', 'cost', 'feedback_score', 'apply_eval_frac', 'log_sample_rate'].map((k) => [
        k,
        Real,
      ]),
    ),
    ...Object.fromEntries(['input_tokens', 'output_tokens', 'total_tokens'].map((k) => [k, Int])),
    cache_hit: z.boolean().nullish(),
    children: z.array(z.string()).describe('the ids of the child spans').optional(),
    children_logs: z
      .array(z.looseObject({ trace_id: z.string() }))
      .describe('the nested child spans, each of this shape'),
  })
  .meta({ title: 'ClientTraceLogTree' });

export const ClientTraceLogPageSchema = z.object({
  total: z.number().int(),
  page: z.number().int(),
  total_pages: z.number().int(),
  page_size: z.number().int(),
  results: z.array(ClientTraceLogSchema),
});

export const ClientProjectSchema = z.object({
  uuid: z.string(),
  name: z.string(),
  created_at: z.string(),
  was_created: z.boolean(),
});

export const ClientCompletionResponseSchema = CompletionResponseSchema;

/** A completion stream's events: every `data:` payload carries a `chunk` string. */
export const ClientStreamEventSchema = z.looseObject({ chunk: z.string() });

export const ClientDeployedPromptSchema = z.object({
  deployment_id: z.string(),
  version_number: z.number(),
  name: Text,
  // Both clients type these as strings: each function is sent as its JSON text.
  functions: z.array(z.string()).nullish(),
  function_call: Text,
  prompt: z
    .object({
      raw_messages: z.array(z.record(z.string(), z.unknown())),
      messages: z.array(z.record(z.string(), z.unknown())),
      inputs: z.record(z.string(), z.unknown()).nullish(),
    })
    .nullish(),
  model: Text,
  provider: Text,
  model_params: z.record(z.string(), z.unknown()).nullish(),
});

/** `TestCaseCollection`, or null for an unknown dataset; test cases are keyed by their id, which goes through int(). */
export const ClientDatasetSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: z.string(),
    last_updated_at: z.string(),
    column_names: z.array(z.string()),
    test_cases: z.record(z.string().regex(/^\d+$/), StoredTestCaseSchema),
  })
  .nullable();

export const ClientExperimentSchema = z.looseObject({
  name: z.string(),
  uuid: z.string(),
  created_at: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

/** `ExperimentWithPinnedStatsSchema`: status and each pinned operation are enums to the client. */
export const ClientExperimentListSchema = z.array(
  ClientExperimentSchema.extend({
    run_name: z.string(),
    project_uuid: z.string(),
    status: ExperimentStatus,
    is_public: z.boolean(),
    pinned_stats: z.array(PinnedStat),
    num_samples: Int,
  }),
);

/** `ExperimentStatsSchema`: the client averages every entry's scores, so they are a list, never null. */
export const ClientExperimentStatsSchema = z.object({
  parent_trace_stats: z.array(
    z.object({
      trace_id: z.string(),
      latency: Real,
      input_tokens: Int,
      output_tokens: Int,
      total_tokens: Int,
      cost: Real,
      scores: z.array(Score),
    }),
  ),
});
