import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { unseal } from '@sightline/core';
import { listBudgets, type Sql, type StoredBudget } from '@sightline/db';
import { costOf, countMessageTokens } from '@sightline/llm';
import { nonPublicLiteral, publicOnlyFetch } from '@sightline/llm/base-url';
import {
  budgetClock,
  budgetWindow,
  reserveBudgets,
  settleBudgets,
  type BudgetHold,
  type BudgetLimit,
  type RedisKeys,
} from '@sightline/queues';
import type { BudgetNotification, CompletionJob, LlmRequest } from '@sightline/schemas';
import { signatureOf } from '../monitors/notification';

export type BudgetDeps = {
  sql: Sql;
  redis: Redis;
  keys: RedisKeys;
  secretsKey: Buffer | undefined;
  /** ALLOW_PRIVATE_WEBHOOK_URLS: channels may reach loopback and private addresses. */
  allowPrivate: boolean;
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

const describe = (b: StoredBudget) => {
  switch (b.scope.kind) {
    case 'organization':
      return 'the organization';
    case 'project':
      return `project ${b.scope.project_name}`;
    case 'api_key':
      return `API key ${b.scope.api_key_id}`;
    default:
      return `end user ${b.scope.end_user_identifier}`;
  }
};

const usd = (n: number) => `$${n.toFixed(2)}`;

/**
 * The gateway's budgets: before a call, its estimated cost is reserved against every budget that applies
 * (atomically in Redis, across every worker), or the call is refused when a blocking one would pass its
 * limit; after it, the real cost takes the reservation's place, and the alert shares reached are told to
 * the budget's channels. The definitions are read from PostgreSQL and kept a few seconds per organization.
 */
export function createBudgetGuard(deps: BudgetDeps) {
  const cache = new LRUCache<string, StoredBudget[]>({ max: 10_000, ttl: deps.cacheMs ?? 2000 });
  const fetchFor = deps.allowPrivate ? fetch : publicOnlyFetch;

  async function budgetsOf(organizationId: string): Promise<StoredBudget[]> {
    const cached = cache.get(organizationId);
    if (cached) return cached;
    const budgets = await listBudgets(deps.sql, organizationId);
    cache.set(organizationId, budgets);
    return budgets;
  }

  /** Tells each channel; a failed attempt is tried twice more, then logged (budgets keep no delivery log). */
  async function notify(b: StoredBudget, notification: BudgetNotification, log: Logger): Promise<void> {
    const body = JSON.stringify(notification);
    const text = `Budget of ${describe(b)}: ${Math.round(notification.share * 100)}% reached (${usd(notification.spent_usd)} of ${usd(b.limit_usd)} this ${b.period})`;
    await Promise.all(
      b.channels.map(async (channel) => {
        const refused = deps.allowPrivate ? null : nonPublicLiteral(channel.url);
        if (refused) return log.warn({ budgetId: b.id, err: refused }, 'budget alert not sent');
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'user-agent': 'Sightline-Budgets',
        };
        const payload = channel.kind === 'slack' ? JSON.stringify({ text }) : body;
        if (channel.kind === 'webhook') {
          if (!deps.secretsKey) return log.warn({ budgetId: b.id }, 'budget alert not sent: no SECRETS_KEY');
          headers['x-sightline-signature'] = signatureOf(payload, unseal(deps.secretsKey, channel.secret));
        }
        for (let attempt = 1; attempt <= 3; attempt++) {
          try {
            const res = await fetchFor(channel.url, {
              method: 'POST',
              headers,
              body: payload,
              redirect: 'manual',
              signal: AbortSignal.timeout(5000),
            });
            await res.body?.cancel();
            if (res.ok) return;
            log.warn({ budgetId: b.id, status: res.status, attempt }, 'budget alert refused');
          } catch (err) {
            log.warn({ budgetId: b.id, err: (err as Error).message, attempt }, 'budget alert failed');
          }
          await new Promise((r) => setTimeout(r, 250 * attempt));
        }
      }),
    );
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
          detail: `budget exceeded: ${describe(b)} has spent ${usd(reserved.spentUsd)} of ${usd(b.limit_usd)} this ${b.period}`,
          retryAfterSeconds: Math.max(1, Math.ceil((reserved.window.end - now) / 1000)),
        };
      }
      return { settle: (costUsd, log) => settle(reserved.hold, applying, costUsd, log) };
    },
  };

  async function settle(hold: BudgetHold, applying: StoredBudget[], costUsd: number, log: Logger): Promise<void> {
    const reached = await settleBudgets(deps.redis, hold, costUsd);
    for (const { budget, share, spentUsd } of reached) {
      const b = applying.find((x) => x.id === budget.id)!;
      const end = budgetWindow(b.period, await budgetClock(deps.redis, deps.keys)).end;
      // Off the caller's path: the answer does not wait for a receiver.
      notify(
        b,
        {
          budget: {
            id: b.id,
            scope: b.scope.kind === 'project' ? { kind: 'project', project_name: b.scope.project_name } : b.scope,
            limit_usd: b.limit_usd,
            period: b.period,
          },
          share,
          spent_usd: spentUsd,
          period_ends_at: new Date(end).toISOString(),
        },
        log,
      ).catch((err: Error) => log.warn({ budgetId: b.id, err: err.message }, 'budget alert failed'));
    }
  }
}
export type BudgetGuard = ReturnType<typeof createBudgetGuard>;
