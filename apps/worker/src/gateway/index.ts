import type { Logger } from 'pino';
import { publishInOrder } from '@sightline/runtime';
import { isSampledIn } from '@sightline/core';
import { replyAnnouncement, type SpanIntake } from '@sightline/queues';
import type { CompletionJob, CompletionResponse, Lane, LlmRequest, RouteProgress, SpanEvent } from '@sightline/schemas';
import { priceAnswer } from './answer';
import type { BudgetGuard, BudgetRefusal } from './budgets';
import { callProvider, noOutcome, type Admission, type Outcome, type ProviderCallDeps } from './provider-call';
import { callRoute, restoredAttempts, waitingAttempt, type Attempt, type RouteGate } from './route';
import { attemptSpanEvent, completionSpanEvent } from './span';

/** `writeLog`: stores a completion's log, reserved by `spans` with its events kept (span-write.processor.ts). */
export type GatewayDeps = ProviderCallDeps & {
  spans: SpanIntake;
  writeLog: (log: SpanEvent[]) => Promise<void>;
  budgets?: BudgetGuard;
};

/**
 * What happens to an answer before its caller hears it: the call's budgets settled with its real cost,
 * so that the caller's next call sees it; or, for a call a budget refused, the caller's 429.
 */
type Before = { settle?: (response: CompletionResponse) => Promise<void>; refusal?: BudgetRefusal };

/**
 * A completion's answer, and its trace log reserved (numbered, so reads wait for it, and kept in Redis) but
 * not yet written.
 */
export type Completed = { response: CompletionResponse; log: SpanEvent[] };

/**
 * How a queued completion keeps to its provider's limits: its lane admits it or not, and it is not tried
 * again past its caller's deadline (epoch ms). `backoffMs`: the wait after an overload without Retry-After.
 */
export type Gate = RouteGate & {
  admit: (lane: Lane, request: LlmRequest) => Promise<Admission>;
  deadline: number;
  backoffMs: number;
};

/**
 * A completion not answered yet: it waits in its lane's queue, for `waitMs` at least, after `error` (if
 * any); a routed one resumes from `route`.
 */
export type Requeue = { lane: Lane; waitMs: number; error: string | null; overload: boolean; route?: RouteProgress };

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
 * A routed call as one outcome: the last attempt's, its time the sum of every attempt's (not the waits in
 * lanes between them), its error naming every target tried when none answered.
 */
function routeOutcome(attempts: Attempt[], targets: number): Outcome {
  const last = attempts.at(-1)!.outcome;
  const before = attempts.slice(0, -1).reduce((sum, a) => sum + a.outcome.latency, 0);
  const error =
    last.error && attempts.length > 1
      ? `no target answered (tried ${attempts.length} of ${targets}): ${attempts.map((a) => `${a.request.provider}/${a.request.model}: ${a.outcome.error}`).join('; ')}`
      : last.error;
  return {
    ...last,
    error,
    latency: before + last.latency,
    timeToFirstToken: last.timeToFirstToken === null ? null : before + last.timeToFirstToken,
  };
}

/**
 * A call placed: its outcome, the request as sent, the failed attempts of a route (logged as child
 * spans); a route that stopped to wait in a target's lane has that target's attempt last in `attempts`,
 * and where to resume in `progress`.
 */
type Placed = {
  outcome: Outcome;
  request: LlmRequest;
  failed: Attempt[];
  attempts?: Attempt[];
  progress?: RouteProgress;
};

/** A route answered by its attempts: the last one's outcome (see routeOutcome), the failed ones logged. */
function routed(attempts: Attempt[], targets: number): Placed {
  return {
    outcome: routeOutcome(attempts, targets),
    request: attempts.at(-1)!.request,
    failed: attempts.filter((a) => a.outcome.error),
  };
}

/**
 * The call: straight to its provider, or through its route's targets. A route whose target must wait its
 * turn answers with that target's outcome and the route's progress.
 */
async function placeCall(
  deps: ProviderCallDeps,
  call: CompletionJob,
  onChunk: ((text: string) => void) | undefined,
  logger: Logger,
  gate: Gate,
): Promise<Placed> {
  if (!call.route) {
    const queued = { admit: gate.admit, deadline: gate.deadline };
    return { outcome: await callProvider(deps, call, onChunk, logger, queued), request: call.request, failed: [] };
  }
  const { attempts, waiting } = await callRoute(deps, { ...call, route: call.route }, onChunk, logger, gate);
  if (!waiting) return routed(attempts, call.route.targets.length);
  const { attempt, progress } = waiting;
  return {
    outcome: attempt.outcome,
    request: attempt.request,
    failed: attempts,
    attempts: [...attempts, attempt],
    progress,
  };
}

/**
 * The completion gateway: key resolution, cache, provider call, pricing and the span event, in the
 * modules of this folder. The log's place is reserved before the answer goes out, so that a read right
 * after the answer waits for the log; `writeLog` then writes it, off the caller's path.
 */
export function createGateway(deps: GatewayDeps) {
  /**
   * The answer to an outcome, sent to the job's caller, and its trace log reserved (in the same round trip);
   * a route's failed attempts are logged too.
   */
  async function answer(
    call: CompletionJob,
    placed: Placed,
    startedAt: Date,
    logger: Logger,
    before: Before = {},
  ): Promise<Completed> {
    const { outcome, request, failed } = placed;
    // A route answers as the target that answered (or failed last).
    const answered = { ...call, request };
    const { response, priceKnown, usageEstimated } = priceAnswer(request, call.trace_id, outcome, startedAt, logger);
    await before.settle?.(response);
    const sampled = isSampledIn(call.log.root_trace_id ?? call.trace_id, call.log.sample_rate);
    const { refusal } = before;
    const reply = replyAnnouncement(
      deps.keys,
      call.reply_to,
      refusal ? { error: refusal.detail, status: 429, retry_after: refusal.retryAfterSeconds } : { done: response },
    );
    const events = sampled
      ? [
          completionSpanEvent(answered, response, outcome.timeToFirstToken, { priceKnown, usageEstimated }),
          ...failed.map((a) => attemptSpanEvent(call, a)),
        ]
      : [];
    const log = events.length ? await deps.spans.reserve(events, reply, true) : [];
    if (!events.length) await publishInOrder(deps.redis, deps.keys.seq, reply.channel, reply.message);
    return { response, log };
  }

  return {
    /**
     * A completion job, through its lanes' `gate`: answered (its caller has the answer when this resolves),
     * or to be queued again (its lane is at its limit, or the provider refused it for overload before any
     * output) while its caller still waits.
     */
    async complete(
      call: CompletionJob,
      onChunk: ((text: string) => void) | undefined,
      logger: Logger,
      gate: Gate,
    ): Promise<(Completed & { refused?: Requeue }) | { requeue: Requeue }> {
      const startedAt = new Date();
      const budget = deps.budgets ? await deps.budgets.reserve(call) : null;
      if (budget && 'detail' in budget) {
        // Refused before the provider: logged as a failed call that cost nothing.
        const refused = { outcome: { ...noOutcome(), error: budget.detail }, request: call.request, failed: [] };
        return answer(call, refused, startedAt, logger, { refusal: budget });
      }
      const release = () => budget?.settle(0, logger);
      let placed: Placed;
      try {
        placed = await placeCall(deps, call, onChunk, logger, gate);
      } catch (err) {
        await release()?.catch(() => {});
        throw err;
      }
      const requeue = requeueOf(placed.outcome, gate);
      if (requeue) {
        // It waits in a lane: reserved again when it runs.
        await release();
        return { requeue: { ...requeue, route: placed.progress } };
      }
      const { lane, deferred, overload, error } = placed.outcome;
      if (deferred)
        placed.outcome.error = `not called: ${placed.request.provider} stayed at its limit until this request's time budget ran out`;
      // A route that stopped to wait and cannot any more answers as one that tried its targets in turn.
      const final = placed.attempts ? routed(placed.attempts, call.route!.targets.length) : placed;
      const completed = await answer(call, final, startedAt, logger, {
        settle: budget
          ? (response) =>
              budget
                .settle(response.cost, logger)
                .catch((err: Error) => logger.warn({ err: err.message }, 'could not settle a call with its budgets'))
          : undefined,
      });
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
    expired: (call: CompletionJob, error: string, logger: Logger) => {
      const never = { ...noOutcome(), error };
      const placed = call.route_progress
        ? routed([...restoredAttempts(call), waitingAttempt(call, never)], call.route!.targets.length)
        : { outcome: never, request: call.request, failed: [] };
      return answer(call, placed, new Date(), logger);
    },
    writeLog: async (log: SpanEvent[]) => (log.length ? deps.writeLog(log) : undefined),
  };
}
export type Gateway = ReturnType<typeof createGateway>;
