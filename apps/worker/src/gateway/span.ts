import { randomUUID } from 'node:crypto';
import { spanCreateEvent, type NewSpanEvent } from '@sightline/queues';
import type { CompletionJob, CompletionResponse } from '@sightline/schemas';
import type { Attempt } from './route';

/** The completion's trace log: the call as configured (unless inputs are omitted) and its answer. */
export function completionSpanEvent(
  call: Omit<CompletionJob, 'reply_to'>,
  response: CompletionResponse,
  timeToFirstToken: number | null,
  { priceKnown, usageEstimated }: { priceKnown: boolean; usageEstimated: boolean },
): NewSpanEvent {
  const { log, request: req } = call;
  return spanCreateEvent({
    organization_id: call.organization_id,
    trace_id: call.trace_id,
    root_trace_id: log.root_trace_id ?? call.trace_id,
    parent_trace_id: log.parent_trace_id,
    project_id: log.project_id,
    request_id: call.request_id,
    fields: {
      trace_name: log.trace_name,
      configuration: {
        // As the provider named it; a name longer than any model's could not be stored (see ModelName).
        model: response.model.slice(0, 512),
        provider: req.provider,
        ...(!log.omit_inputs && {
          model_params: req.params,
          messages: req.messages,
          ...(req.tools && { functions: req.tools }),
        }),
      },
      inputs: log.omit_inputs ? null : (log.inputs ?? null),
      output: log.omit_outputs ? null : response.content,
      start_timestamp: response.start_timestamp,
      end_timestamp: response.end_timestamp,
      latency: response.latency,
      time_to_first_token: timeToFirstToken,
      input_tokens: response.input_tokens,
      output_tokens: response.output_tokens,
      total_tokens: response.total_tokens,
      cost: response.cost,
      ...(usageEstimated && { usage_estimated: true }),
      status: response.status,
      error: response.error,
      cache_hit: response.cache_hit,
      deployment_id: log.deployment_id ?? null,
      experiment_uuid: log.experiment_uuid ?? null,
      end_user_identifier: log.end_user_identifier ?? null,
      metadata: priceKnown ? (log.metadata ?? null) : { ...log.metadata, price_unknown: true },
      tags: log.tags ?? null,
      target: log.target ?? null,
      ...(log.evaluation_metric_names && { evaluation_metric_names: log.evaluation_metric_names }),
    },
  });
}

/** A route's failed attempt, as a child of the completion's span: the target, its error and its time. */
export function attemptSpanEvent(call: Omit<CompletionJob, 'reply_to'>, attempt: Attempt): NewSpanEvent {
  const { log } = call;
  const { request: req, outcome } = attempt;
  const end = new Date(attempt.startedAt.getTime() + outcome.latency * 1000);
  return spanCreateEvent({
    organization_id: call.organization_id,
    trace_id: randomUUID(),
    root_trace_id: log.root_trace_id ?? call.trace_id,
    parent_trace_id: call.trace_id,
    project_id: log.project_id,
    request_id: call.request_id,
    fields: {
      trace_name: `attempt ${req.provider}/${req.model}`,
      configuration: { model: req.model, provider: req.provider },
      start_timestamp: attempt.startedAt.toISOString(),
      end_timestamp: end.toISOString(),
      latency: outcome.latency,
      status: 'error',
      error: outcome.error,
      metadata: { kind: 'llm', route: call.route?.name ?? null, failure: outcome.failure ?? 'other' },
    },
  });
}
