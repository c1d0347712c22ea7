import type { Logger } from 'pino';
import { isSampledIn } from '@sightline/core';
import { replyAnnouncement, type SpanIntake } from '@sightline/queues';
import type { CompletionJob, CompletionResponse, Lane, LlmRequest, SpanEvent } from '@sightline/schemas';
import { priceAnswer } from './answer';
import { callProvider, noOutcome, type Admission, type Outcome, type ProviderCallDeps } from './provider-call';
import { callRoute, type Attempt } from './route';
import { attemptSpanEvent, completionSpanEvent } from './span';

export type GatewayDeps = ProviderCallDeps & { spans: SpanIntake };

/** One completion as the gateway takes it, from the completion queue or from the eval worker. */
export type GatewayCall = Omit<CompletionJob, 'reply_to'>;

/** A completion's answer, and its trace log reserved (numbered, so reads wait for it) but not yet queued. */
export type Completed = { response: CompletionResponse; log: SpanEvent[] };

/**
 * How a queued completion keeps to its provider's limits: its lane admits it or not, and it is not tried
 * again past its caller's deadline (epoch ms). `backoffMs`: the wait after an overload without Retry-After.
 */
export type Gate = {
  admit: (lane: Lane, request: LlmRequest) => Promise<Admission>;
  deadline: number;
  backoffMs: number;
};

/** A completion not answered yet: it waits in its lane's queue, for `waitMs` at least, after `error` (if any). */
export type Requeue = { lane: Lane; waitMs: number; error: string | null; overload: boolean };

/** Whether a call that did not go (or was refused for overload) waits again, rather than answer now. */
function requeueOf(outcome: Outcome, gate: Gate): Requeue | null {
  const { lane, deferred, overload } = outcome;
  if (!lane || !(deferred || overload)) return null;
  const waitMs = deferred ? (deferred.waitMs ?? 0) : (overload!.retryAfterMs ?? gate.backoffMs);
  // The caller would stop waiting first: it hears now, with the provider's message.
  if (Date.now() + waitMs >= gate.deadline) return null;
  return { lane, waitMs, error: outcome.error, overload: overload !== null };
}

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
  gate: Gate | undefined,
): Promise<{ outcome: Outcome; request: LlmRequest; failed: Attempt[] }> {
  if (!call.route) {
    const queued = gate && { admit: gate.admit, budgetMs: gate.deadline - Date.now() };
    return { outcome: await callProvider(deps, call, onChunk, logger, queued), request: call.request, failed: [] };
  }
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
 * modules of this folder. The log's place is reserved before the answer goes out, so that a read right
 * after the answer waits for the log; `writeLog` then queues it, off the caller's path.
 */
export function createGateway(deps: GatewayDeps) {
  /**
   * The answer to an outcome, and its trace log reserved; a route's failed attempts are logged too. With
   * `replyTo` (a queued job's caller), the answer is sent to it in the reservation's own round trip.
   */
  async function answer(
    call: GatewayCall,
    placed: { outcome: Outcome; request: LlmRequest; failed: Attempt[] },
    startedAt: Date,
    logger: Logger,
    replyTo?: string,
  ): Promise<Completed> {
    const { outcome, request, failed } = placed;
    // A route answers as the target that answered (or failed last).
    const answered = { ...call, request };
    const { response, priceKnown } = priceAnswer(request, call.trace_id, outcome, startedAt, logger);
    const sampled = isSampledIn(call.log.root_trace_id ?? call.trace_id, call.log.sample_rate);
    const reply = replyTo === undefined ? undefined : replyAnnouncement(deps.keys, replyTo, { done: response });
    const events = sampled
      ? [
          completionSpanEvent(answered, response, outcome.timeToFirstToken, priceKnown),
          ...failed.map((a) => attemptSpanEvent(call, a)),
        ]
      : [];
    const log = events.length ? await deps.spans.reserve(events, reply) : [];
    if (reply && !events.length) await deps.redis.publish(reply.channel, reply.message);
    return { response, log };
  }

  return {
    /** The completion, answered whatever happens (a refusal for overload is the SDK's to retry). */
    async complete(
      call: GatewayCall,
      onChunk: ((text: string) => void) | undefined,
      logger: Logger,
    ): Promise<Completed> {
      const startedAt = new Date();
      return answer(call, await placeCall(deps, call, onChunk, logger, undefined), startedAt, logger);
    },
    /**
     * A queued completion, through its lane's `gate`: answered (its caller has the answer when this
     * resolves), or to be queued again (its lane is at its limit, or the provider refused it for overload
     * before any output) while its caller still waits.
     */
    async completeQueued(
      call: CompletionJob,
      onChunk: ((text: string) => void) | undefined,
      logger: Logger,
      gate: Gate,
    ): Promise<(Completed & { refused?: Requeue }) | { requeue: Requeue }> {
      const startedAt = new Date();
      const placed = await placeCall(deps, call, onChunk, logger, gate);
      const requeue = requeueOf(placed.outcome, gate);
      if (requeue) return { requeue };
      const { lane, deferred, overload, error } = placed.outcome;
      if (deferred)
        placed.outcome.error = `not called: ${call.request.provider} stayed at its limit until this request's time budget ran out`;
      const completed = await answer(call, placed, startedAt, logger, call.reply_to);
      // Answered with the refusal (no retry fitted in the budget): the provider's pause holds for other calls.
      if (!overload || !lane) return completed;
      return {
        ...completed,
        refused: { lane, waitMs: overload.retryAfterMs ?? gate.backoffMs, error, overload: true },
      };
    },
    /**
     * The answer of a completion whose caller stopped waiting before it could run (never called), sent to
     * its caller when this resolves.
     */
    expired: (call: CompletionJob, error: string, logger: Logger) =>
      answer(
        call,
        { outcome: { ...noOutcome(), error }, request: call.request, failed: [] },
        new Date(),
        logger,
        call.reply_to,
      ),
    writeLog: async (log: SpanEvent[]) => (log.length ? deps.spans.enqueue(log) : undefined),
  };
}
export type Gateway = ReturnType<typeof createGateway>;
