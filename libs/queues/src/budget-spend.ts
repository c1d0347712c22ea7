import type { Redis } from 'ioredis';
import type { BudgetPeriod } from '@sightline/schemas';
import type { RedisKeys } from './keys';
import { withScripts } from './scripts';

/** Amounts in Redis are integers of nano-USD: sums of many small costs never drift. */
const NANO = 1e9;
const toNanoUsd = (usd: number) => Math.round(usd * NANO);
const toUsd = (nano: number) => nano / NANO;

/** A UTC day or calendar month: [start, end) in epoch ms. */
export type BudgetWindow = { start: number; end: number };

export function budgetWindow(period: BudgetPeriod, now: number): BudgetWindow {
  const d = new Date(now);
  if (period === 'day') {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: start + 86_400_000 };
  }
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/**
 * The budgets' clock (epoch ms): Redis's time, so that every worker and API node agrees on the period, plus
 * an offset that a test or a drill may set to move it (a rollover is tried without waiting for midnight).
 */
export async function budgetClock(redis: Redis, keys: RedisKeys): Promise<number> {
  const [[, time], [, offset]] = (await redis.multi().time().get(keys.budgetClockOffset).exec()) as [
    [null, [string, string]],
    [null, string | null],
  ];
  return Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) + Number(offset ?? 0);
}

/** A budget as the reservation needs it. */
export type BudgetLimit = {
  id: string;
  limit_usd: number;
  period: BudgetPeriod;
  blocking: boolean;
  alert_at: number[];
};

/** A hash outlives its period by a day, so that a call in flight across the end settles into it. */
const expiryOf = (w: BudgetWindow) => Math.ceil(w.end / 1000) + 86_400;

/** Where a call's reservation was made: each budget's hash in the period of the reservation. */
export type BudgetHold = { budgets: BudgetLimit[]; keys: string[]; windows: BudgetWindow[]; estimate: number };

/**
 * Reserves `estimateUsd` against every budget at once (one script: atomic across workers), or none when a
 * blocking budget would pass its limit: then the budget that refused, its spend and its window.
 */
export async function reserveBudgets(
  redis: Redis,
  keys: RedisKeys,
  budgets: BudgetLimit[],
  estimateUsd: number,
  now: number,
): Promise<{ hold: BudgetHold } | { refused: BudgetLimit; spentUsd: number; window: BudgetWindow }> {
  const estimate = toNanoUsd(estimateUsd);
  const windows = budgets.map((b) => budgetWindow(b.period, now));
  const hashKeys = budgets.map((b, i) => keys.budgetSpend(b.id, windows[i].start));
  const args = budgets.flatMap((b, i) => [toNanoUsd(b.limit_usd), b.blocking ? 1 : 0, expiryOf(windows[i])]);
  const [refusedAt, spent] = await withScripts(redis).reserveBudgetsLua(
    hashKeys.length,
    ...hashKeys,
    estimate,
    ...args,
  );
  if (refusedAt) return { refused: budgets[refusedAt - 1], spentUsd: toUsd(spent), window: windows[refusedAt - 1] };
  return { hold: { budgets, keys: hashKeys, windows, estimate } };
}

/**
 * Puts the call's real cost in its reservation's place (0: it failed, or was never made), and answers the
 * alert shares each budget's spend has reached in the reservation's period (already told or not: the
 * caller records each once).
 */
export async function settleBudgets(
  redis: Redis,
  hold: BudgetHold,
  costUsd: number,
): Promise<{ budget: BudgetLimit; share: number; spentUsd: number; window: BudgetWindow }[]> {
  if (!hold.keys.length) return [];
  const spent = await withScripts(redis).settleBudgetsLua(
    hold.keys.length,
    ...hold.keys,
    hold.estimate,
    toNanoUsd(costUsd),
  );
  return hold.budgets.flatMap((budget, i) =>
    budget.alert_at
      .filter((share) => spent[i] >= toNanoUsd(share * budget.limit_usd))
      .map((share) => ({ budget, share, spentUsd: toUsd(spent[i]), window: hold.windows[i] })),
  );
}

/** Each budget's spend and reservations in its period holding `now`, in USD. */
export async function readBudgetSpend(
  redis: Redis,
  keys: RedisKeys,
  budgets: Pick<BudgetLimit, 'id' | 'period'>[],
  now: number,
): Promise<{ spentUsd: number; reservedUsd: number; window: BudgetWindow }[]> {
  if (!budgets.length) return [];
  const windows = budgets.map((b) => budgetWindow(b.period, now));
  const pipeline = redis.pipeline();
  budgets.forEach((b, i) => pipeline.hmget(keys.budgetSpend(b.id, windows[i].start), 'spent', 'reserved'));
  const rows = (await pipeline.exec())!;
  return rows.map(([err, v], i) => {
    if (err) throw err;
    const [spent, reserved] = v as (string | null)[];
    return { spentUsd: toUsd(Number(spent ?? 0)), reservedUsd: toUsd(Number(reserved ?? 0)), window: windows[i] };
  });
}
