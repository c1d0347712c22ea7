import type { Logger } from 'pino';
import { callBudgetMs } from '@sightline/llm';
import type { CompletionJob, LlmRequest, RouteTarget } from '@sightline/schemas';
import { callProvider, type Outcome, type ProviderCall, type ProviderCallDeps } from './provider-call';

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

/**
 * A completion through a route: its targets in turn until one answers or a failure is not one the route
 * moves on from. Each target but the last is called once (the route, not the SDK, retries); the last
 * keeps the server's retries, so a route is never less patient than a call without one. Nothing is tried
 * again once any text has been streamed to the caller. The attempts share the budget of a call without a
 * route, less the time the job waited before it started: the caller's deadline (`deadline_ms`) is what
 * the API waits for. Every attempt is returned, the answering one last.
 */
export async function callRoute(
  deps: ProviderCallDeps,
  call: ProviderCall & { route: Route },
  onChunk: ((text: string) => void) | undefined,
  log: Logger,
): Promise<Attempt[]> {
  const { route } = call;
  const coolingKeys = route.targets.map((_, i) => deps.keys.routeCooling(call.organization_id, route.name, i));
  const cooling =
    route.strategy === 'loadbalance'
      ? (await deps.redis.mget(...coolingKeys).catch(() => [])).map((v) => v !== null && v !== undefined)
      : [];
  let streamed = false;
  const relay = onChunk
    ? (text: string) => {
        streamed = true;
        onChunk(text);
      }
    : undefined;
  const attempts: Attempt[] = [];
  const budgetMs = Math.min(callBudgetMs(deps.timeoutMs, deps.maxRetries), (call.deadline_ms ?? Infinity) - Date.now());
  const deadline = performance.now() + budgetMs;
  const order = targetOrder(route, cooling);
  for (const [n, i] of order.entries()) {
    const left = deadline - performance.now();
    if (attempts.length && left <= 0) break;
    const target = route.targets[i];
    const request = { ...call.request, provider: target.provider, model: target.model };
    const startedAt = new Date();
    // The request's own key belongs to the provider it named, not to the route's targets.
    const outcome = await callProvider(deps, { ...call, request, provider_api_key: undefined }, relay, log, {
      maxRetries: n === order.length - 1 ? deps.maxRetries : 0,
      budgetMs: left,
      keyName: target.provider_key,
    });
    attempts.push({ target, request, outcome, startedAt });
    if (!outcome.error) break;
    const movesOn = outcome.failure !== null && route.retry_on.includes(outcome.failure);
    if (movesOn && route.strategy === 'loadbalance')
      void deps.redis.set(coolingKeys[i], '1', 'PX', COOLDOWN_MS).catch(() => {});
    if (!movesOn || streamed) break;
  }
  return attempts;
}
