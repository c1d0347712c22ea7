import { z } from 'zod';
import { IndexedText, Uuid } from './common';
import { MonitorChannel, MonitorChannelOut, MonitorChannelPatch } from './monitor';
import { ProjectName } from './project';

/** Whose spend a budget limits: the whole organization's, a project's, an API key's or an end user's. */
export const BudgetScope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('organization') }).strict(),
  z.object({ kind: z.literal('project'), project_name: ProjectName }).strict(),
  z.object({ kind: z.literal('api_key'), api_key_id: Uuid }).strict(),
  z.object({ kind: z.literal('end_user'), end_user_identifier: IndexedText.min(1) }).strict(),
]);
export type BudgetScope = z.infer<typeof BudgetScope>;

const BUDGET_PERIODS = ['day', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
const BUDGET_ACTIONS = ['block', 'alert'] as const;
export type BudgetAction = (typeof BUDGET_ACTIONS)[number];

/** Shares of the limit at which the channels are told, once each per period: distinct, in (0, 1]. */
const AlertShares = z
  .array(z.number().gt(0).max(1))
  .max(10)
  .refine((a) => new Set(a).size === a.length, 'the shares are distinct');

const budgetFields = {
  scope: BudgetScope,
  limit_usd: z.number().positive().max(1_000_000_000),
  /** UTC days or calendar months. */
  period: z.enum(BUDGET_PERIODS),
  /** `block`: a call that could take the spend past the limit is refused (429); `alert`: only told. */
  action: z.enum(BUDGET_ACTIONS),
  alert_at: AlertShares,
  channels: z.array(MonitorChannel).max(10),
};

export const BudgetCreateSchema = z
  .object({
    ...budgetFields,
    alert_at: budgetFields.alert_at.default([0.5, 0.8, 1.0]),
    channels: budgetFields.channels.default([]),
  })
  .strict();

/**
 * A budget's fields to change; its scope stays. `channels` replaces them all; a webhook sent without its
 * secret keeps the one it has.
 */
export const BudgetPatchSchema = z
  .object({
    limit_usd: budgetFields.limit_usd,
    period: budgetFields.period,
    action: budgetFields.action,
    alert_at: budgetFields.alert_at,
    channels: z.array(MonitorChannelPatch).max(10),
  })
  .partial()
  .strict();

export const BudgetParams = z.object({ id: Uuid });

export const BudgetSchema = z.object({
  id: z.string(),
  scope: BudgetScope,
  limit_usd: z.number(),
  period: z.enum(BUDGET_PERIODS),
  action: z.enum(BUDGET_ACTIONS),
  alert_at: z.array(z.number()),
  channels: z.array(MonitorChannelOut),
  /** Spent in the current period, and reserved by calls in flight. */
  spent_usd: z.number(),
  reserved_usd: z.number(),
  remaining_usd: z.number(),
  period_started_at: z.string(),
  period_ends_at: z.string(),
  /** The shares reached in the current period, each with how its channels were told. */
  alerts: z.array(
    z.object({
      share: z.number(),
      at: z.string(),
      deliveries: z.array(
        z.object({
          channel_kind: z.enum(['webhook', 'slack']),
          status: z.enum(['pending', 'delivered', 'failed']),
          attempts: z.number().int(),
        }),
      ),
    }),
  ),
  created_at: z.string(),
  updated_at: z.string(),
});

/** What a channel receives when a budget's spend reaches one of its shares (signed as monitors' are). */
export const BudgetNotificationSchema = z.object({
  budget: z.object({ id: z.string(), scope: BudgetScope, limit_usd: z.number(), period: z.enum(BUDGET_PERIODS) }),
  share: z.number(),
  spent_usd: z.number(),
  period_ends_at: z.string(),
});
export type BudgetNotification = z.infer<typeof BudgetNotificationSchema>;
