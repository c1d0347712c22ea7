import { isSampledIn } from '@sightline/core';
import { spanCreateEvent, type NewSpanEvent } from '@sightline/queues';
import { TraceLogFields, type TraceLogCreate } from '@sightline/schemas';

const FIELD_NAMES = Object.keys(TraceLogFields.shape);

/** The span fields of a request body (or of an update's map); anything else is left behind. */
export function pickFields(source: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of FIELD_NAMES) if (source[name] !== undefined) fields[name] = source[name];
  return fields;
}

/** Whether the span's trace is kept (`log_sample_rate` decides per root, so a trace is kept whole). */
export const sampledIn = (body: TraceLogCreate, traceId: string) =>
  isSampledIn(body.root_trace_id ?? traceId, body.log_sample_rate);

/** The create event of one posted span. */
export const createEvent = (
  organizationId: string,
  body: TraceLogCreate,
  projectId: string,
  traceId: string,
): NewSpanEvent =>
  spanCreateEvent({
    organization_id: organizationId,
    trace_id: traceId,
    root_trace_id: body.root_trace_id,
    parent_trace_id: body.parent_trace_id,
    project_id: projectId,
    fields: { ...pickFields(body), ...(body.children != null && { children_ids: body.children }) },
  });
