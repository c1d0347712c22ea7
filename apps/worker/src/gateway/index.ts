import type { Logger } from 'pino';
import { isSampledIn } from '@sightline/core';
import type { SpanIntake } from '@sightline/queues';
import type { CompletionJob, CompletionResponse, LlmRequest, SpanEvent } from '@sightline/schemas';
import { priceAnswer } from './answer';
import { callProvider, type Outcome, type ProviderCallDeps } from './provider-call';
import { callRoute, type Attempt } from './route';
import { attemptSpanEvent, completionSpanEvent } from './span';

export type GatewayDeps = ProviderCallDeps & { spans: SpanIntake };

/** One completion as the gateway takes it, from the completion queue or from the eval worker. */
export type GatewayCall = Omit<CompletionJob, 'reply_to'>;

/** A completion's answer, and its trace log reserved (numbered, so reads wait for it) but not yet queued. */
export type Completed = { response: CompletionResponse; log: SpanEvent[] };

/**
 * A routed call as one outcome: the last attempt's, timed from the first attempt's start, its error
 * naming every target tried when none answered.
 */
function routeOutcome(attempts: Attempt[], targets: number, t0: number): Outcome {
  const last = attempts.at(-1)!.outcome;
  const sinceStart = (performance.now() - t0) / 1000;
  const ttft = last.timeToFirstToken === null ? null : sinceStart - last.latency + last.timeToFirstToken;
  const error =
    last.error && attempts.length > 1
      ? `no target answered (tried ${attempts.length} of ${targets}): ${attempts.map((a) => `${a.request.provider}/${a.request.model}: ${a.outcome.error}`).join('; ')}`
      : last.error;
  return { ...last, error, latency: sinceStart, timeToFirstToken: ttft };
}

/** The call: straight to its provider, or through its route's targets (the failed ones returned too). */
async function placeCall(
  deps: ProviderCallDeps,
  call: GatewayCall,
  onChunk: ((text: string) => void) | undefined,
  logger: Logger,
): Promise<{ outcome: Outcome; request: LlmRequest; failed: Attempt[] }> {
  if (!call.route)
    return { outcome: await callProvider(deps, call, onChunk, logger), request: call.request, failed: [] };
  const t0 = performance.now();
  const attempts = await callRoute(deps, { ...call, route: call.route }, onChunk, logger);
  return {
    outcome: routeOutcome(attempts, call.route.targets.length, t0),
    request: attempts.at(-1)!.request,
    failed: attempts.filter((a) => a.outcome.error),
  };
}

/**
 * The completion gateway: key resolution, cache, provider call, pricing and the span event, in the
 * modules of this folder. `complete` reserves the log's place before it answers, so that a read right
 * after the answer waits for the log; `writeLog` then queues it, off the caller's path.
 */
export function createGateway(deps: GatewayDeps) {
  return {
    async complete(
      call: GatewayCall,
      onChunk: ((text: string) => void) | undefined,
      logger: Logger,
    ): Promise<Completed> {
      const startedAt = new Date();
      const { outcome, request, failed } = await placeCall(deps, call, onChunk, logger);
      // A route answers as the target that answered (or failed last); its failed attempts are logged too.
      const answered = { ...call, request };
      const { response, priceKnown } = priceAnswer(request, call.trace_id, outcome, startedAt, logger);
      const sampled = isSampledIn(call.log.root_trace_id ?? call.trace_id, call.log.sample_rate);
      const log = sampled
        ? await deps.spans.reserve([
            completionSpanEvent(answered, response, outcome.timeToFirstToken, priceKnown),
            ...failed.map((a) => attemptSpanEvent(call, a)),
          ])
        : [];
      return { response, log };
    },
    writeLog: async (log: SpanEvent[]) => (log.length ? deps.spans.enqueue(log) : undefined),
  };
}
export type Gateway = ReturnType<typeof createGateway>;
