import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { listBudgets, recordBudgetAlert, type Sql, type StoredBudget } from '@sightline/db';
import { costOf, countMessageTokens } from '@sightline/llm';
import {
  budgetClock,
  reserveBudgets,
  settleBudgets,
  type BudgetHold,
  type BudgetLimit,
  type Producer,
  type RedisKeys,
} from '@sightline/queues';
import type { BudgetNotification, CompletionJob, LlmRequest } from '@sightline/schemas';
import { describeBudgetScope, usd } from '../monitors/notification';

export type BudgetDeps = {
  sql: Sql;
  redis: Redis;
  keys: RedisKeys;
  /** Where an alert's deliveries are sent from: the monitors' queue, with its retries and log. */
  deliveries: Producer<'monitor-delivery'>;
  /** How long a worker keeps an organization's budgets before reading them again. */
  cacheMs?: number;
};

/** A call's reservation, to be replaced by its real cost (or released: 0) once it is done. */
export type BudgetReservation = { settle(costUsd: number, log: Logger): Promise<void> };

/** A call no blocking budget allows: its caller's 429. */
export type BudgetRefusal = { detail: string; retryAfterSeconds: number };

/** The output a call is reserved for when it names no max_tokens. */
const DEFAULT_OUTPUT_TOKENS = 4096;

/**
 * The most a call can cost, as estimated before it is made: its prompt counted with the model's tokenizer,
 * and max_tokens (or a default) of output, at the model's prices; a routed call, its dearest target's.
 */
function estimateOf(call: CompletionJob): number {
  const requests: LlmRequest[] = call.route
    ? call.route.targets.map((t) => ({ ...call.request, provider: t.provider, model: t.model }))
    : [call.request];
  return Math.max(
    ...requests.map(
      (r) =>
        costOf(r.provider, r.model, {
          input_tokens: countMessageTokens(r.model, r.messages),
          output_tokens: r.params.max_tokens ?? DEFAULT_OUTPUT_TOKENS,
        }).cost,
    ),
  );
}

/** Whether a budget limits this call: the organization's, its project's, its API key's, its end user's. */
function applies(b: StoredBudget, call: CompletionJob): boolean {
  switch (b.scope.kind) {
    case 'organization':
      return true;
    case 'project':
      return b.scope.project_id === call.log.project_id;
    case 'api_key':
      return b.scope.api_key_id === call.api_key_id;
    default:
      return b.scope.end_user_identifier === call.log.end_user_identifier;
  }
}

/**
 * The gateway's budgets: before a call, its estimated cost is reserved against every budget that applies
 * (atomically in Redis, across every worker), or the call is refused when a blocking one would pass its
 * limit; after it, the real cost takes the reservation's place, and the alert shares reached are told to
 * the budget's channels. The definitions are read from PostgreSQL and kept a few seconds per organization.
 */
export function createBudgetGuard(deps: BudgetDeps) {
  const cache = new LRUCache<string, StoredBudget[]>({ max: 10_000, ttl: deps.cacheMs ?? 2000 });
  /** The alert shares this worker knows are recorded: the others are tried at each call past them. */
  const recorded = new LRUCache<string, true>({ max: 100_000 });

  async function budgetsOf(organizationId: string): Promise<StoredBudget[]> {
    const cached = cache.get(organizationId);
    if (cached) return cached;
    const budgets = await listBudgets(deps.sql, organizationId);
    cache.set(organizationId, budgets);
    return budgets;
  }

  return {
    /** Reserves the call's estimate against its budgets, or refuses it. */
    async reserve(call: CompletionJob): Promise<BudgetReservation | BudgetRefusal> {
      const applying = (await budgetsOf(call.organization_id)).filter((b) => applies(b, call));
      if (!applying.length) return { settle: async () => {} };
      const limits: BudgetLimit[] = applying.map((b) => ({
        id: b.id,
        limit_usd: b.limit_usd,
        period: b.period,
        blocking: b.action === 'block',
        alert_at: b.action === 'alert' && !b.alert_at.length ? [1] : b.alert_at,
      }));
      const now = await budgetClock(deps.redis, deps.keys);
      const reserved = await reserveBudgets(deps.redis, deps.keys, limits, estimateOf(call), now);
      if ('refused' in reserved) {
        const b = applying.find((x) => x.id === reserved.refused.id)!;
        return {
          detail: `budget exceeded: ${describeBudgetScope(b.scope)} has spent ${usd(reserved.spentUsd)} of ${usd(b.limit_usd)} this ${b.period}`,
          retryAfterSeconds: Math.max(1, Math.ceil((reserved.window.end - now) / 1000)),
        };
      }
      return { settle: (costUsd, log) => settle(reserved.hold, applying, costUsd, log) };
    },
  };

  async function settle(hold: BudgetHold, applying: StoredBudget[], costUsd: number, log: Logger): Promise<void> {
    const reached = await settleBudgets(deps.redis, hold, costUsd);
    // Off the caller's path: the answer does not wait for PostgreSQL or a receiver.
    for (const { budget, share, spentUsd, window } of reached) {
      const b = applying.find((x) => x.id === budget.id)!;
      const notification: BudgetNotification = {
        budget: {
          id: b.id,
          scope: b.scope.kind === 'project' ? { kind: 'project', project_name: b.scope.project_name } : b.scope,
          limit_usd: b.limit_usd,
          period: b.period,
        },
        share,
        spent_usd: spentUsd,
        period_ends_at: new Date(window.end).toISOString(),
      };
      tell(b.id, new Date(window.start), share, notification).catch((err: Error) =>
        log.warn({ budgetId: b.id, share, err: err.message }, 'budget alert not recorded yet'),
      );
    }
  }

  /**
   * Records an alert share once (PostgreSQL's unique key, whichever worker comes first) with a delivery to
   * each channel, and queues them under their own ids. Until it is recorded, every call that settles past
   * the share tries again: an alert is not lost with a worker that dies before recording it.
   */
  async function tell(budgetId: string, periodStart: Date, share: number, n: BudgetNotification): Promise<void> {
    const key = `${budgetId}:${periodStart.getTime()}:${share}`;
    if (recorded.has(key)) return;
    const ids = await recordBudgetAlert(deps.sql, budgetId, periodStart, share, n);
    recorded.set(key, true);
    await deps.deliveries.addBulk(ids.map((id) => ({ payload: { delivery_id: id }, options: { jobId: id } })));
  }
}
export type BudgetGuard = ReturnType<typeof createBudgetGuard>;
