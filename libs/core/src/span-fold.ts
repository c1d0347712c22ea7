import { secondsBetween } from './timestamps';

// Span events can reach the worker in any order (an update before its create, a retried create, a
// redelivered job). Each event carries a sequence number taken when the API accepted it, and the state
// of a span is two last-writer-wins layers: what creates said, and over it what updates and feedback
// said. A field takes an event's value only when that event is newer than the one that last set the
// field in its layer, and a create never overrides a field an update has set (a client's late retry of
// its create must not undo the update that followed it). Folding is therefore idempotent and
// independent of delivery order.

export type SpanEventKind = 'create' | 'update' | 'feedback';
export type FoldEvent = { kind: SpanEventKind; seq: number; fields: Record<string, unknown> };
export type Versions = { create: Record<string, number>; update: Record<string, number> };
export type SpanState = { created: boolean; versions: Versions; fields: Record<string, unknown> };

export function foldEvents(state: SpanState | undefined, events: readonly FoldEvent[]): SpanState {
  const next: SpanState = state
    ? { created: state.created, versions: { create: { ...state.versions.create }, update: { ...state.versions.update } }, fields: { ...state.fields } }
    : { created: false, versions: { create: {}, update: {} }, fields: {} };
  for (const event of events) {
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
    root_trace_id: rootTraceId,
    parent_trace_id: parentTraceId,
    latency: fields.latency ?? (start && end ? secondsBetween(start, end) : null),
    total_tokens:
      fields.total_tokens ?? (inputTokens == null && outputTokens == null ? null : (inputTokens ?? 0) + (outputTokens ?? 0)),
    // Non-root depth and order depend on other spans; the store computes them once the tree is known.
    depth: fields.depth ?? (isRoot ? 0 : null),
    execution_order: fields.execution_order ?? (isRoot ? 0 : null),
  };
}
