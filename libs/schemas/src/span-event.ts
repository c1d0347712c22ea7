import { z } from 'zod';
import { RequestId, SmallCount, Uuid } from './common';
import { EvalResult } from './eval-metric';
import { Annotation, Comment, TraceLogFields } from './trace-log';

/** Fields a span-write event may set: the trace-log fields plus the ones the server resolves. */
export const SpanEventFields = TraceLogFields.extend({
  root_trace_id: Uuid,
  parent_trace_id: Uuid,
  project_id: Uuid,
  children_ids: z.array(z.string()).nullish(),
  feedback_comment: z.string().nullish(),
  eval_scores: z.record(z.string(), EvalResult),
  /** The console's comments (by id) and annotations (by criterion and user), kept apart from the client's. */
  /**
   * Its tokens (and cost) were counted from its text, not reported: by the gateway for a provider that
   * reported none, or by the store for an LLM span logged without usage (libs/llm/src/usage-estimate.ts).
   */
  usage_estimated: z.boolean().nullish(),
  remarks: z.object({
    comments: z.record(z.string(), z.looseObject({})),
    annotations: z.record(z.string(), z.record(z.string(), z.looseObject({}))),
  }),
}).partial();

/**
 * Comments and annotations made in the console, entry by entry: a comment by its id, an annotation by
 * criterion and user. Null removes the entry.
 */
const RemarksSchema = z.object({
  comments: z.record(z.string(), Comment.extend({ id: z.string() }).nullable()).optional(),
  annotations: z.record(z.string(), z.record(z.string(), Annotation.nullable())).optional(),
});
export type Remarks = z.infer<typeof RemarksSchema>;

const FIELD_NAMES = new Set(Object.keys(SpanEventFields.shape));

/**
 * An event's fields as the worker reads them from a job: an object, its known fields kept, their values
 * not checked again. Whoever made the event checked them: the API's request schemas, the OpenTelemetry
 * mapping (property-tested to answer fields TraceLogFields leaves as they are) or the worker's own code.
 * Checking them again cost about 40 µs of the worker's CPU a span (of some 250); a value PostgreSQL
 * refuses still fails its own event alone (the span-write worker isolates such events).
 */
const FieldsAsMade = z
  .custom<z.infer<typeof SpanEventFields>>(
    (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    'fields must be an object',
  )
  .transform((fields) => {
    for (const name of Object.keys(fields)) if (!FIELD_NAMES.has(name)) delete fields[name as keyof typeof fields];
    return fields;
  });

const SpanEventSchema = z.object({
  kind: z.enum(['create', 'update', 'feedback', 'eval', 'remark']),
  organization_id: Uuid,
  trace_id: Uuid,
  /** Acceptance order, assigned atomically in Redis; makes the fold order-independent. */
  seq: z.number().int().positive(),
  /** The root whose pending-write set counts this event, so reads of that trace can wait for it. */
  pending_root: Uuid.optional(),
  fields: FieldsAsMade,
  /**
   * The span's place in its tree as the API saw it when the request held the whole of the span's path to
   * the root (OpenTelemetry intake): taken until the store recomputes the tree, which it does once any span
   * of the trace lacks a place. Unlike a client's `depth`, it never overrides the tree.
   */
  tree: z.object({ depth: SmallCount, execution_order: SmallCount }).optional(),
  /**
   * OpenTelemetry intake: a root's span-id form (which its children name as their parent), or that the
   * span's parent was not in its request (it may be the root's span-id form, to be pointed at the root).
   */
  otel: z.object({ root_alias: Uuid.optional(), parent_elsewhere: z.literal(true).optional() }).optional(),
  /** Only on 'remark' events. */
  remarks: RemarksSchema.optional(),
  request_id: RequestId,
});
export type SpanEvent = z.infer<typeof SpanEventSchema>;

export const SpanWriteJobSchema = z.object({ events: z.array(SpanEventSchema).min(1) });
