import { secondsBetween } from './timestamps';

// Span events can reach the worker in any order (an update before its create, a retried create, a
// redelivered job). Each event carries a sequence number taken when the API accepted it, and the state
// of a span is two last-writer-wins layers: what creates said, and over it what updates and feedback
// said. A field takes an event's value only when that event is newer than the one that last set the
// field in its layer, and a create never overrides a field an update has set (a client's late retry of
// its create must not undo the update that followed it). Folding is therefore idempotent and
// independent of delivery order.

type SpanEventKind = 'create' | 'update' | 'feedback' | 'eval' | 'remark';
type Entry = Record<string, unknown>;
/** Console comments by id, and annotations by criterion and user; null removes an entry. */
type FoldRemarks = {
  comments?: Record<string, (Entry & { id: string }) | null>;
  annotations?: Record<string, Record<string, Entry | null>>;
};
export type FoldEvent = { kind: SpanEventKind; seq: number; fields: Record<string, unknown>; remarks?: FoldRemarks };
export type Versions = { create: Record<string, number>; update: Record<string, number> };
export type SpanState = { created: boolean; versions: Versions; fields: Record<string, unknown> };

export function foldEvents(state: SpanState | undefined, events: readonly FoldEvent[]): SpanState {
  const next: SpanState = state
    ? {
        created: state.created,
        versions: { create: { ...state.versions.create }, update: { ...state.versions.update } },
        fields: { ...state.fields },
      }
    : { created: false, versions: { create: {}, update: {} }, fields: {} };
  for (const event of events) {
    if (event.kind === 'eval') {
      foldEvalResults(next, event);
      continue;
    }
    if (event.kind === 'remark') {
      foldRemarks(next, event.seq, event.remarks ?? {});
      continue;
    }
    const isCreate = event.kind === 'create';
    if (isCreate) next.created = true;
    const layer = isCreate ? next.versions.create : next.versions.update;
    for (const [name, value] of Object.entries(event.fields)) {
      if (value === undefined || event.seq <= (layer[name] ?? 0)) continue;
      layer[name] = event.seq;
      if (!isCreate || !(name in next.versions.update)) next.fields[name] = value;
    }
  }
  return next;
}

// Evaluation results merge by metric name, each name its own last-writer-wins register, so a re-run or
// a retried job replaces its own result and never touches another metric's.
function foldEvalResults(state: SpanState, event: FoldEvent): void {
  const results = { ...((state.fields.eval_scores as Record<string, unknown> | undefined) ?? {}) };
  for (const [name, result] of Object.entries(
    (event.fields.eval_scores as Record<string, unknown> | undefined) ?? {},
  )) {
    if (claim(state, `eval:${name}`, event.seq)) results[name] = result;
  }
  state.fields.eval_scores = results;
  state.versions.update.eval_scores = Math.max(state.versions.update.eval_scores ?? 0, event.seq);
}

/** Whether an event of this seq is newer than the last one that set the entry `key`; if so, it now has. */
function claim(state: SpanState, key: string, seq: number): boolean {
  if (seq <= (state.versions.update[key] ?? 0)) return false;
  state.versions.update[key] = seq;
  return true;
}

// Comments and annotations made in the console merge entry by entry, each entry its own last-writer-wins
// register (a removal too), so two people remarking at once never lose each other's remarks, whatever
// order their events arrive in. They are kept in their own field, `remarks`, and merged into the
// client's `comments` and `annotations` as the span is derived: a client's create arriving late replaces
// its own comments, never the console's.
type StoredRemarks = { comments: Record<string, Entry>; annotations: Record<string, Record<string, Entry>> };

function foldRemarks(state: SpanState, seq: number, remarks: FoldRemarks): void {
  const stored = (state.fields.remarks as StoredRemarks | null | undefined) ?? { comments: {}, annotations: {} };
  const next: StoredRemarks = { comments: { ...stored.comments }, annotations: structuredClone(stored.annotations) };
  for (const [id, comment] of Object.entries(remarks.comments ?? {})) {
    if (!claim(state, `comment:${id}`, seq)) continue;
    if (comment) next.comments[id] = { ...comment, id };
    else delete next.comments[id];
  }
  for (const [criterion, byUser] of Object.entries(remarks.annotations ?? {})) {
    for (const [user, annotation] of Object.entries(byUser)) {
      if (!claim(state, `annotation:${criterion}:${user}`, seq)) continue;
      if (annotation) (next.annotations[criterion] ??= {})[user] = { ...annotation, source: 'console' };
      else if (next.annotations[criterion]) {
        delete next.annotations[criterion][user];
        if (!Object.keys(next.annotations[criterion]).length) delete next.annotations[criterion];
      }
    }
  }
  state.fields.remarks = next;
  state.versions.update.remarks = Math.max(state.versions.update.remarks ?? 0, seq);
}

/**
 * The client's comments and annotations with the console's merged in. What was merged before is
 * recognised (a console comment has an id, a console annotation says so) and replaced by the current
 * remarks, so a removed remark does not linger.
 */
function withRemarks(fields: Record<string, unknown>): { comments?: unknown; annotations?: unknown } {
  const remarks = fields.remarks as StoredRemarks | null | undefined;
  if (!remarks) return {};
  const own = ((fields.comments as Entry[] | null | undefined) ?? []).filter((c) => c?.id === undefined);
  const comments = [...own, ...Object.values(remarks.comments)].sort((a, b) =>
    String(a.created_at).localeCompare(String(b.created_at)),
  );
  const annotations: Record<string, Record<string, Entry>> = {};
  for (const [criterion, byUser] of Object.entries(
    (fields.annotations as Record<string, Record<string, Entry>> | null | undefined) ?? {},
  )) {
    const clients = Object.entries(byUser ?? {}).filter(([, a]) => a?.source !== 'console');
    if (clients.length) annotations[criterion] = Object.fromEntries(clients);
  }
  for (const [criterion, byUser] of Object.entries(remarks.annotations))
    annotations[criterion] = { ...annotations[criterion], ...byUser };
  return { comments, annotations };
}

/** Where evaluation errors are shown: a key of the span's metadata. */
const EVAL_ERRORS_KEY = 'sightline_eval_errors';

type EvalResults = Record<string, { score?: number; reason?: string | null; error?: string }>;

/** The span's scores with its evaluation results merged in by name, and its metadata with their errors. */
export function withEvalResults(fields: Record<string, unknown>): { scores: unknown; metadata: unknown } {
  const results = fields.eval_scores as EvalResults | undefined;
  if (!results || !Object.keys(results).length)
    return { scores: fields.scores ?? null, metadata: fields.metadata ?? null };
  const evaluated = Object.entries(results).filter(([, r]) => typeof r.score === 'number');
  // Every evaluated name is the evaluation's, scored or failed: an older score of it read back from the
  // stored scores must not outlive a later error.
  const names = new Set(Object.keys(results));
  const own = ((fields.scores as { name: string }[] | null | undefined) ?? []).filter((s) => !names.has(s?.name));
  const scores = [
    ...own,
    ...evaluated.map(([name, r]) => ({ name, score: r.score, ...(r.reason != null && { reason: r.reason }) })),
  ];
  const errors = Object.fromEntries(
    Object.entries(results)
      .filter(([, r]) => r.error !== undefined)
      .map(([name, r]) => [name, r.error]),
  );
  const { [EVAL_ERRORS_KEY]: _previous, ...metadata } =
    (fields.metadata as Record<string, unknown> | null | undefined) ?? {};
  const hasMetadata = fields.metadata != null || Object.keys(errors).length > 0;
  return {
    scores,
    metadata: hasMetadata ? { ...metadata, ...(Object.keys(errors).length && { [EVAL_ERRORS_KEY]: errors }) } : null,
  };
}

/** The fields the client left out that the server fills: ids default to the span's own, sums and differences. */
export function deriveFields(traceId: string, fields: Record<string, unknown>): Record<string, unknown> {
  const rootTraceId = (fields.root_trace_id as string | null | undefined) ?? traceId;
  const parentTraceId = (fields.parent_trace_id as string | null | undefined) ?? traceId;
  const isRoot = parentTraceId === traceId;
  const start = fields.start_timestamp as string | null | undefined;
  const end = fields.end_timestamp as string | null | undefined;
  const inputTokens = fields.input_tokens as number | null | undefined;
  const outputTokens = fields.output_tokens as number | null | undefined;
  return {
    ...fields,
    ...withEvalResults(fields),
    ...withRemarks(fields),
    root_trace_id: rootTraceId,
    parent_trace_id: parentTraceId,
    latency: fields.latency ?? (start && end ? secondsBetween(start, end) : null),
    total_tokens:
      fields.total_tokens ??
      (inputTokens == null && outputTokens == null ? null : (inputTokens ?? 0) + (outputTokens ?? 0)),
    // Non-root depth and order depend on other spans; the store computes them once the tree is known.
    depth: fields.depth ?? (isRoot ? 0 : null),
    execution_order: fields.execution_order ?? (isRoot ? 0 : null),
  };
}
