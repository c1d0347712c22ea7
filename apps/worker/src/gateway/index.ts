import type { Logger } from 'pino';
import { isSampledIn } from '@sightline/core';
import type { SpanIntake } from '@sightline/queues';
import type { CompletionJob, CompletionResponse, SpanEvent } from '@sightline/schemas';
import { priceAnswer } from './answer';
import { callProvider, type ProviderCallDeps } from './provider-call';
import { completionSpanEvent } from './span';

export type GatewayDeps = ProviderCallDeps & { spans: SpanIntake };

/** One completion as the gateway takes it, from the completion queue or from the eval worker. */
export type GatewayCall = Omit<CompletionJob, 'reply_to'>;

/** A completion's answer, and its trace log reserved (numbered, so reads wait for it) but not yet queued. */
export type Completed = { response: CompletionResponse; log: SpanEvent[] };

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
      const outcome = await callProvider(deps, call, onChunk, logger);
      const { response, priceKnown } = priceAnswer(call.request, call.trace_id, outcome, startedAt, logger);
      const sampled = isSampledIn(call.log.root_trace_id ?? call.trace_id, call.log.sample_rate);
      const log = sampled
        ? await deps.spans.reserve([completionSpanEvent(call, response, outcome.timeToFirstToken, priceKnown)])
        : [];
      return { response, log };
    },
    writeLog: async (log: SpanEvent[]) => (log.length ? deps.spans.enqueue(log) : undefined),
  };
}
export type Gateway = ReturnType<typeof createGateway>;
