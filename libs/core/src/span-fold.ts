import { secondsBetween } from './timestamps';

// Span events can reach the worker in any order (an update before its create, a retried create, a
// redelivered job). Each event carries a sequence number taken when the API accepted it. A span's state
// is a last-writer-wins map: a field takes an event's value only when that event is newer than the one
// that last set the field. Folding is therefore idempotent and order-independent, and the result equals
// the in-order application of the events.

export type SpanEventKind = 'create' | 'update' | 'feedback';
export type FoldEvent = { kind: SpanEventKind; seq: number; fields: Record<string, unknown> };
export type SpanState = { created: boolean; versions: Record<string, number>; fields: Record<string, unknown> };

export function foldEvents(state: SpanState | undefined, events: readonly FoldEvent[]): SpanState {
  const next: SpanState = state
    ? { created: state.created, versions: { ...state.versions }, fields: { ...state.fields } }
    : { created: false, versions: {}, fields: {} };
  for (const event of events) {
    if (event.kind === 'create') next.created = true;
    for (const [name, value] of Object.entries(event.fields)) {
      if (value === undefined) continue;
      if (event.seq > (next.versions[name] ?? 0)) {
        next.versions[name] = event.seq;
        next.fields[name] = value;
      }
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
