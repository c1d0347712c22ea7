import { z } from 'zod';
import { Timestamp, Uuid } from './common';
import { TraceRowsRequestSchema } from './console';
import { GetTraceLogsSchema, TIME_RANGES } from './trace-log';

/**
 * The window: `from`/`to` when given, else the last `time_range` (7 days by default); the traces counted in it
 * are those POST /traces lists for the same `filters`, `status`, `search` and `include_experiments`.
 */
export const DashboardRequestSchema = z
  .object({
    project_uuid: Uuid,
    time_range: z.enum(TIME_RANGES).exclude(['na']).default('7d'),
    from: Timestamp.nullish(),
    to: Timestamp.nullish(),
    filters: GetTraceLogsSchema.shape.filters,
    status: GetTraceLogsSchema.shape.status,
    search: TraceRowsRequestSchema.shape.search,
    include_experiments: z
      .boolean()
      .default(false)
      .describe('whether traces logged by an experiment run are counted: production traffic alone unless asked'),
  })
  .refine((r) => !r.from || !r.to || r.from < r.to, { message: 'from must be before to', path: ['from'] });

const Figures = {
  traces: z.number().int(),
  errors: z.number().int(),
  latency_p50: z.number().nullable(),
  latency_p95: z.number().nullable(),
  latency_p99: z.number().nullable(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost: z.number(),
};
export const DashboardSchema = z.object({
  from: z.string(),
  to: z.string(),
  bucket_seconds: z.number().int(),
  totals: z.object({ ...Figures, error_rate: z.number().nullable() }),
  buckets: z.array(z.object({ start: z.string(), ...Figures })).describe('buckets with no trace are left out'),
  cost_by_model: z
    .array(z.object({ model: z.string(), calls: z.number().int(), cost: z.number() }))
    .describe('the 20 costliest models, costliest first'),
  cost_by_model_buckets: z
    .array(z.object({ start: z.string(), model: z.string(), calls: z.number().int(), cost: z.number() }))
    .describe(
      "each of cost_by_model's models bucket by bucket, in the order of the buckets (a bucket without a call left out)",
    ),
  scores: z.array(z.object({ name: z.string(), start: z.string(), mean: z.number(), count: z.number().int() })),
  feedback: z.array(z.object({ start: z.string(), mean: z.number(), count: z.number().int() })),
  latency_approximate: z
    .boolean()
    .describe(
      'whether the latency percentiles were read from hourly histograms (an unfiltered window of whole-hour buckets): each is then within 1% of the exact one',
    ),
});

export const TraceGroupsRequestSchema = z.object({
  project_uuid: Uuid,
  by: z.enum(['session', 'user']),
  time_range: z.enum(TIME_RANGES).default('na').describe('only the traces that started in it are counted'),
  search: z
    .string()
    .max(200)
    .nullish()
    .describe('part of the session id (or user identifier), in any case; blank: every group'),
  page: z.number().int().min(1).max(1_000_000).default(1),
  page_size: z.number().int().min(1).max(1000).default(50),
});
export const TraceGroupsSchema = z.object({
  total: z.number().int(),
  results: z.array(
    z.object({
      key: z.string(),
      traces: z.number().int(),
      first_start: z.string().nullable(),
      last_start: z.string().nullable(),
      errors: z.number().int(),
      latency_avg: z.number().nullable(),
      cost: z.number(),
      feedback_mean: z.number().nullable(),
    }),
  ),
});
export const TraceGroupRequestSchema = z.object({
  project_uuid: Uuid,
  by: z.enum(['session', 'user']),
  key: z.string().min(1).max(512),
  time_range: z.enum(TIME_RANGES).default('na').describe('only the traces that started in it'),
});
export const TraceGroupSchema = z.object({
  key: z.string(),
  traces: z
    .array(
      z.looseObject({
        trace_id: z.string(),
        start_timestamp: z.string().nullable(),
        inputs: z.unknown(),
        output: z.unknown(),
        status: z.string().nullish(),
        error: z.string().nullish().describe("a failed trace's error"),
        session_id: z.string().nullish(),
      }),
    )
    .describe('in the order they happened'),
});
