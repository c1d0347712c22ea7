import { z } from 'zod';
import { OptionalUuid, Uuid } from './common';
import { ExperimentSchema, TraceLogTreeSchema } from './responses';
import { FilterSchema, GetTraceLogsSchema } from './trace-log';

// The routes the web console needs beyond api.md's: summaries, light rows, a trace's skeleton and one
// span's payload, so that the browser never downloads whole trees to draw a table or a timeline.

/** A project with its activity: all-time root traces, and the last 24 hours' traces, cost and errors. */
export const ProjectSummarySchema = z.object({
  uuid: z.string(),
  name: z.string(),
  created_at: z.string(),
  traces: z.number().int(),
  last_activity: z.string().nullable(),
  traces_24h: z.number().int(),
  cost_24h: z.number(),
  error_rate_24h: z.number().nullable().describe('errors / traces over the last 24 hours; null without traces'),
});

/** How much of a payload a row's preview carries (a table cell shows its first line). */
export const ROW_PREVIEW_CHARS = 300;

/** get_trace_logs' body, by project uuid or name, with a full-text search over inputs, output and metadata. */
const TRACE_SORTS = [
  'newest',
  'oldest',
  'slowest',
  'fastest',
  'costliest',
  'cheapest',
  'most_tokens',
  'fewest_tokens',
  'name_asc',
  'name_desc',
  'best_feedback',
  'worst_feedback',
] as const;
export type TraceSort = (typeof TRACE_SORTS)[number];

export const TraceRowsRequestSchema = GetTraceLogsSchema.extend({
  project_uuid: OptionalUuid,
  sort: z
    .enum(TRACE_SORTS)
    .default('newest')
    .describe(
      "newest or oldest first (by start); slowest or fastest (the root span's latency; fastest lists traces without a latency first); costliest or cheapest, most or fewest tokens (the trace's, as the row shows them); by name (A to Z or Z to A, newest first within a name); best or worst feedback score first",
    ),
  include_experiments: z
    .boolean()
    .default(false)
    .describe(
      "whether traces logged by an experiment run are listed: the console shows production's alone unless asked",
    ),
  content: z
    .boolean()
    .default(false)
    .describe(
      `whether each row carries the start of its root's inputs (as JSON) and output, ${ROW_PREVIEW_CHARS} characters at most`,
    ),
  count: z
    .boolean()
    .default(true)
    .describe(
      'whether the page waits for the count of every matching trace; false answers the page alone (total_exact then false unless this page is the last), and POST /traces/count counts them apart, as the console does',
    ),
  metadata_keys: z
    .array(z.string().min(1).max(200))
    .max(10)
    .default([])
    .describe("metadata keys whose values each row carries (metadata_values), as the table's columns show them"),
  search: z
    .string()
    .max(500)
    .nullish()
    .describe(
      'words and "phrases" that one span of the trace holds in its inputs, output or metadata (whole words, any case; ids, numbers, emails and URLs are not indexed: filter on those), and -words none holds',
    ),
});

const TRACE_EXPORT_FORMATS = ['jsonl', 'csv', 'parquet'] as const;
export type TraceExportFormat = (typeof TRACE_EXPORT_FORMATS)[number];
export type TraceExportShape = 'traces' | 'spans';

/** POST /traces/export: the traces table's request (its page aside), and the file asked for. */
export const TraceExportRequestSchema = TraceRowsRequestSchema.omit({
  page: true,
  page_size: true,
  content: true,
  count: true,
  metadata_keys: true,
}).extend({
  format: z
    .enum(TRACE_EXPORT_FORMATS)
    .describe(
      "jsonl: a trace (spans nested under `children`) or a span a line, in GET /trace_log's shape; csv (formulas escaped as in a dataset's export) and parquet: a column per span field, JSON fields as JSON text, a trace's row being its root's with its spans nested in `children`",
    ),
  shape: z
    .enum(['traces', 'spans'])
    .default('traces')
    .describe(
      'traces: a line or row per trace, its spans nested; spans: a line or row per span, with its trace and parent ids',
    ),
  export_id: Uuid.optional().describe(
    "an id of the caller's choosing, under which GET /traces/export/{export_id} tells how far the export is",
  ),
});

/** How far an export is: the traces and spans written so far, and whether it ended (and how). */
export const TraceExportProgressSchema = z.object({
  traces: z.number().int(),
  spans: z.number().int(),
  state: z.enum(['running', 'done', 'failed', 'cancelled']),
});
export type TraceExportProgress = z.infer<typeof TraceExportProgressSchema>;

/** A root trace as a table row: the root span's own fields and the trace's span count. */
const TraceRowSchema = z.object({
  trace_id: z.string(),
  project_uuid: z.string().nullable(),
  trace_name: z.string().nullable(),
  start_timestamp: z.string().nullable(),
  end_timestamp: z.string().nullable(),
  latency: z.number().nullable(),
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  total_tokens: z.number().nullable(),
  cost: z
    .number()
    .nullable()
    .describe("the trace's: the root's own value when it has one, else the sum over its spans (so for tokens)"),
  usage_estimated: z.boolean().describe("the trace's tokens and cost count a span whose usage was estimated"),
  status: z.string().nullable(),
  error: z.string().nullable(),
  scores: z.array(z.looseObject({ name: z.string(), score: z.number().nullable() })),
  feedback_score: z.number().nullable(),
  tags: z.array(z.string()),
  end_user_identifier: z.string().nullable(),
  session_id: z.string().nullable(),
  experiment_uuid: z
    .string()
    .nullable()
    .describe('the experiment run that logged the trace; null for production traffic'),
  span_count: z.number().int(),
  input_preview: z.string().nullable().optional().describe("with content: the start of the root's inputs as JSON"),
  output_preview: z.string().nullable().optional().describe("with content: the start of the root's output"),
  metadata_values: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the values of the metadata_keys asked for that the root has (a long value cut, as a string)'),
});
export const TraceRowsSchema = z.object({
  total: z
    .number()
    .int()
    .describe('the matching traces; when total_exact is false, those found so far, and more may match'),
  total_exact: z
    .boolean()
    .describe(
      'false when a search for common words found a full page among the newest traces without counting the rest, or when the page was asked without its count (`count: false`)',
    ),
  searched_roots: z
    .number()
    .int()
    .nullable()
    .describe('set when such a search tested only this many of the newest traces and found fewer than a page'),
  page: z.number().int(),
  total_pages: z.number().int(),
  page_size: z.number().int(),
  results: z.array(TraceRowSchema),
});

export const TraceCountSchema = z.object({
  total: z
    .number()
    .int()
    .nullable()
    .describe(
      'the traces the same request to POST /traces matches; null when its search is for words so common that the listing tests the newest traces one by one, and cannot count them all',
    ),
});

/** What the tree and the timeline draw: no inputs, outputs or other payloads. */
const SkeletonSpanSchema = z.object({
  trace_id: z.string(),
  parent_trace_id: z.string(),
  trace_name: z.string().nullable(),
  kind: z.string().nullable().describe("the LangChain run type, or 'llm' for a span with a model"),
  start_timestamp: z.string().nullable(),
  end_timestamp: z.string().nullable(),
  latency: z.number().nullable(),
  status: z.string().nullable(),
  input_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  total_tokens: z.number().nullable(),
  cost: z.number().nullable(),
  usage_estimated: z.boolean().describe('tokens and cost counted from the text: the span reported no usage'),
  depth: z.number().int(),
  execution_order: z.number().int(),
});
export const TraceSkeletonSchema = z.object({
  root_trace_id: z.string(),
  experiment_uuid: z
    .string()
    .nullish()
    .describe("the experiment run that logged the trace (its root's); null for production traffic"),
  spans: z.array(SkeletonSpanSchema).describe('in execution order (depth first)'),
});

/** The trace page's search within one trace. */
export const TraceSearchQuery = z.object({
  text: z.string().min(1).max(500).describe('found as written, in any case: no wildcards (% and _ are themselves)'),
});
export const TraceSearchSchema = z.object({
  trace_ids: z
    .array(z.string())
    .describe("the trace's spans whose name, inputs, output or metadata contain the text, in execution order"),
});

/** One span with every field, as in a trace log but without its children. */
export const SpanSchema = TraceLogTreeSchema.omit({ children: true, children_ids: true }).meta({ title: 'Span' });

export const LiveTracesQuery = z.object({ project_uuid: Uuid });

/** A project's experiments for the console's list: POST /experiments' rows with how many samples each has now. */
export const ExperimentSummariesSchema = z.object({
  results: z.array(
    ExperimentSchema.extend({
      samples: z.number().int().describe('root traces logged so far (num_samples is set when it finishes)'),
    }),
  ),
});

/** One experiment's samples as table rows, filtered by the shared filter object. */
export const ExperimentSamplesRequestSchema = FilterSchema.extend({
  page: z.number().int().min(1).max(1_000_000).default(1),
  page_size: z.number().int().min(1).max(200).default(50),
});

const ScoreSummarySchema = z.object({
  name: z.string(),
  count: z.number().int(),
  mean: z.number(),
  median: z.number(),
  standard_deviation: z.number().nullable().describe('the sample standard deviation; null for one value'),
  min: z.number(),
  max: z.number(),
});

export const ExperimentSamplesSchema = z.object({
  total: z.number().int(),
  page: z.number().int(),
  total_pages: z.number().int(),
  page_size: z.number().int(),
  summary: z.array(ScoreSummarySchema).describe("each numeric score over all the experiment's samples"),
  results: z.array(
    TraceRowSchema.extend({
      inputs: z.unknown(),
      target: z.string().nullable(),
      output: z.string().nullable(),
      output_truncated: z.boolean().describe('the output is cut to its first 2,000 characters'),
    }),
  ),
});
