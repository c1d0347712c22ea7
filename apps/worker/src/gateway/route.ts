import type { Logger } from 'pino';
import { callBudgetMs } from '@sightline/llm';
import type { CompletionJob, Lane, LlmRequest, RouteProgress, RouteTarget } from '@sightline/schemas';
import {
  callProvider,
  noOutcome,
  type CallOverrides,
  type Outcome,
  type ProviderCall,
  type ProviderCallDeps,
} from './provider-call';

type Route = NonNullable<CompletionJob['route']>;

/** How long a load-balanced target is passed over after a failure a route moves on from. */
const COOLDOWN_MS = 5_000;

/** One target tried: the request as that target was sent it, and how it went. */
export type Attempt = { target: RouteTarget; request: LlmRequest; outcome: Outcome; startedAt: Date };

/** Indexes drawn one by one with probability proportional to their weight (default 1), without replacement. */
function byWeight(indexes: number[], targets: RouteTarget[], random: () => number): number[] {
  const pool = [...indexes];
  const drawn: number[] = [];
  while (pool.length) {
    const total = pool.reduce((sum, i) => sum + (targets[i].weight ?? 1), 0);
    let at = random() * total;
    const k = pool.findIndex((i) => (at -= targets[i].weight ?? 1) < 0);
    // Rounding can leave a draw at the very end of the last share, past every one.
    drawn.push(...pool.splice(k < 0 ? pool.length - 1 : k, 1));
  }
  return drawn;
}

/**
 * The order a route's targets are tried in: as listed (fallback), or drawn by weight (loadbalance), the
 * targets cooling down after a recent failure drawn only after every other.
 */
export function targetOrder(route: Route, cooling: boolean[], random = Math.random): number[] {
  const indexes = route.targets.map((_, i) => i);
  if (route.strategy === 'fallback') return indexes;
  return [
    ...byWeight(
      indexes.filter((i) => !cooling[i]),
      route.targets,
      random,
    ),
    ...byWeight(
      indexes.filter((i) => cooling[i]),
      route.targets,
      random,
    ),
  ];
}

/** The request as a target is sent it: the caller's, with the target's provider and model. */
const targetRequest = (request: LlmRequest, target: RouteTarget): LlmRequest => ({
  ...request,
  provider: target.provider,
  model: target.model,
});

/** A route's failed attempt as a job carries it while it waits in a lane (see `restoredAttempts`). */
function savedAttempt(call: ProviderCall & { route: Route }, attempt: Attempt): RouteProgress['failed'][number] {
  return {
    target: call.route.targets.indexOf(attempt.target),
    error: attempt.outcome.error ?? '',
    failure: attempt.outcome.failure,
    latency: attempt.outcome.latency,
    started_ms: attempt.startedAt.getTime(),
  };
}

/** The failed attempts a waiting route's job carries, as attempts again. */
export function restoredAttempts(call: Pick<CompletionJob, 'request' | 'route' | 'route_progress'>): Attempt[] {
  if (!call.route || !call.route_progress) return [];
  const { targets } = call.route;
  return call.route_progress.failed.map((saved) => ({
    target: targets[saved.target],
    request: targetRequest(call.request, targets[saved.target]),
    outcome: { ...noOutcome(), error: saved.error, failure: saved.failure, latency: saved.latency },
    startedAt: new Date(saved.started_ms),
  }));
}

/** The target a route waits for (see RouteProgress), as an attempt that came to `outcome` without a call. */
export function waitingAttempt(
  call: Pick<CompletionJob, 'request' | 'route' | 'route_progress'>,
  outcome: Outcome,
): Attempt {
  const { order, next } = call.route_progress!;
  const target = call.route!.targets[order[next]];
  return { target, request: targetRequest(call.request, target), outcome, startedAt: new Date() };
}

/**
 * A routed call: every attempt (the answering one last), or, when a target has to wait its turn in its
 * lane (at its limit, or paused after an overload the route does not move on from), the attempts so far
 * and where to resume: that target's outcome and the route's progress.
 */
export type RouteCall = {
  attempts: Attempt[];
  waiting?: { attempt: Attempt; progress: RouteProgress };
};

/**
 * What a queued route needs from its lanes: `admit` (see Admission) and `refused`, told of a target's
 * overload that the route moved on from, so that the provider's pause holds for its lane's other calls.
 */
export type RouteGate = {
  admit: NonNullable<CallOverrides['admit']>;
  refused: (lane: Lane, retryAfterMs: number | null, error: string | null) => Promise<void>;
};

/**
 * A completion through a route: its targets in turn until one answers or a failure is not one the route
 * moves on from. The SDK retries no target but the last (the route does the retrying); the last keeps the
 * server's retries, so a route is never less patient than a call without one. Nothing is tried
 * again once any text has been streamed to the caller. The attempts share the budget of a call without a
 * route, capped by the caller's deadline (`deadline_ms`), which is what the API waits for.
 *
 * A route keeps to each target's lane (`gate`): a target whose lane is at its limit, or paused, is not
 * called; the route stops there and its job waits in that lane, resuming from that target
 * (`call.route_progress`).
 */
export async function callRoute(
  deps: ProviderCallDeps,
  call: ProviderCall & { route: Route },
  onChunk: ((text: string) => void) | undefined,
  log: Logger,
  gate: RouteGate,
): Promise<RouteCall> {
  const { route } = call;
  const coolingKeys = route.targets.map((_, i) => deps.keys.routeCooling(call.organization_id, route.name, i));
  const cooling =
    route.strategy === 'loadbalance' && !call.route_progress
      ? (await deps.redis.mget(...coolingKeys).catch(() => [])).map((v) => v !== null && v !== undefined)
      : [];
  let streamed = false;
  const relay = onChunk
    ? (text: string) => {
        streamed = true;
        onChunk(text);
      }
    : undefined;
  const attempts = restoredAttempts(call);
  const budgetMs = Math.min(callBudgetMs(deps.timeoutMs, deps.maxRetries), (call.deadline_ms ?? Infinity) - Date.now());
  const deadline = performance.now() + budgetMs;
  const order = call.route_progress?.order ?? targetOrder(route, cooling);
  for (let n = call.route_progress?.next ?? 0; n < order.length; n++) {
    const left = deadline - performance.now();
    if (attempts.length && left <= 0) break;
    const i = order[n];
    const target = route.targets[i];
    const request = targetRequest(call.request, target);
    const startedAt = new Date();
    // The request's own key belongs to the provider it named, not to the route's targets.
    const outcome = await callProvider(deps, { ...call, request, provider_api_key: undefined }, relay, log, {
      maxRetries: n === order.length - 1 ? deps.maxRetries : 0,
      deadline: Date.now() + left,
      keyName: target.provider_key,
      admit: gate.admit,
    });
    const movesOn = outcome.failure !== null && route.retry_on.includes(outcome.failure);
    // An overload on the last target waits in its lane, as a call without a route does.
    if (outcome.deferred || (outcome.overload && (!movesOn || n === order.length - 1))) {
      const progress = { order, next: n, failed: attempts.map((a) => savedAttempt(call, a)) };
      return { attempts, waiting: { attempt: { target, request, outcome, startedAt }, progress } };
    }
    attempts.push({ target, request, outcome, startedAt });
    if (!outcome.error) break;
    if (outcome.overload && outcome.lane)
      await gate
        .refused(outcome.lane, outcome.overload.retryAfterMs, outcome.error)
        .catch((err: Error) => log.warn({ err: err.message }, 'lane bookkeeping failed'));
    if (movesOn && route.strategy === 'loadbalance')
      void deps.redis.set(coolingKeys[i], '1', 'PX', COOLDOWN_MS).catch(() => {});
    if (!movesOn || streamed) break;
  }
  return { attempts };
}
