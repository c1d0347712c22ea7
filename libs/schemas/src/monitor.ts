import { z } from 'zod';
import { IndexedText, OptionalUuid, Uuid } from './common';
import { EvalRuleFilter } from './eval-rule';
import { ProjectName } from './project';

/** What a monitor measures over its window of a project's production traces (their roots). */
const MONITOR_METRICS = [
  'error_rate',
  'latency_p50',
  'latency_p95',
  'latency_p99',
  'cost',
  'tokens',
  'trace_count',
  'score_mean',
] as const;
export type MonitorMetric = (typeof MONITOR_METRICS)[number];

/**
 * When a monitor fires: its window's value above or below a threshold, or `anomaly`: more than `mads`
 * median absolute deviations from the median of the same window on each of the previous 7 days.
 */
export const MonitorCondition = z.union([
  z.object({ above: z.number() }).strict(),
  z.object({ below: z.number() }).strict(),
  z.object({ anomaly: z.object({ mads: z.number().positive().max(100) }).strict() }).strict(),
]);
export type MonitorCondition = z.infer<typeof MonitorCondition>;

/** Where a change of state is sent: a webhook (signed with its secret) or a Slack incoming webhook. */
export const MonitorChannel = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('webhook'), url: z.url().max(2048), secret: z.string().min(16).max(256) }).strict(),
  z.object({ kind: z.literal('slack'), url: z.url().max(2048) }).strict(),
]);

/** A channel in a PATCH: a webhook without `secret` keeps the secret of the channel with its URL. */
export const MonitorChannelPatch = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('webhook'), url: z.url().max(2048), secret: z.string().min(16).max(256).optional() })
    .strict(),
  z.object({ kind: z.literal('slack'), url: z.url().max(2048) }).strict(),
]);
export type MonitorChannelPatch = z.infer<typeof MonitorChannelPatch>;

/** A channel as the API reads it back: the webhook's secret is never answered, only that it is set. */
export const MonitorChannelOut = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('webhook'), url: z.string(), secret_set: z.literal(true) }),
  z.object({ kind: z.literal('slack'), url: z.string() }),
]);

const MONITOR_STATES = ['ok', 'firing', 'no_data'] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

const monitorFields = {
  name: IndexedText.min(1),
  metric: z.enum(MONITOR_METRICS),
  score_name: IndexedText.min(1).nullish(),
  filters: z.array(EvalRuleFilter).max(20),
  window_minutes: z.number().int().min(1).max(1440),
  condition: MonitorCondition,
  min_samples: z.number().int().min(1).max(1_000_000),
  channels: z.array(MonitorChannel).max(10),
  enabled: z.boolean(),
};

/** A score_mean monitor names its score; no other monitor does. */
const scoreNamed = (m: { metric?: MonitorMetric; score_name?: string | null }, ctx: z.RefinementCtx) => {
  if (m.metric === 'score_mean' && !m.score_name)
    ctx.addIssue({ code: 'custom', path: ['score_name'], message: 'a score_mean monitor names its score' });
  if (m.metric && m.metric !== 'score_mean' && m.score_name)
    ctx.addIssue({ code: 'custom', path: ['score_name'], message: 'only a score_mean monitor names a score' });
};

export const MonitorCreateSchema = z
  .object({
    ...monitorFields,
    project_name: ProjectName.nullish(),
    project_uuid: OptionalUuid,
    filters: monitorFields.filters.default([]),
    min_samples: monitorFields.min_samples.default(10),
    channels: monitorFields.channels.default([]),
    enabled: monitorFields.enabled.default(true),
  })
  .superRefine(scoreNamed);

/**
 * A monitor's fields to change; its project stays. `channels` replaces them all; a webhook sent without its
 * secret keeps the one it has.
 */
export const MonitorPatchSchema = z
  .object({ ...monitorFields, channels: z.array(MonitorChannelPatch).max(10) })
  .partial()
  .superRefine(scoreNamed);

export const MonitorParams = z.object({ id: Uuid });

export const MonitorSchema = z.object({
  id: z.string(),
  project_uuid: z.string(),
  ...monitorFields,
  score_name: z.string().nullable(),
  channels: z.array(MonitorChannelOut),
  state: z.enum(MONITOR_STATES),
  last_value: z.number().nullable(),
  last_evaluated_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** One point of a monitor's metric: its value over the window ending at `at`, from `samples` traces. */
const MonitorPointSchema = z.object({ at: z.string(), value: z.number().nullable(), samples: z.number().int() });

const MonitorDeliverySchema = z.object({
  id: z.string(),
  channel: z.enum(['webhook', 'slack']),
  url: z.string(),
  /** The change of state it tells. */
  state: z.enum(MONITOR_STATES),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.array(
    z.object({
      at: z.string(),
      status_code: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number().int(),
    }),
  ),
  created_at: z.string(),
});

/** `GET /monitors/{id}`: the monitor, its changes of state, its deliveries and its metric's last 24 hours. */
export const MonitorDetailSchema = MonitorSchema.extend({
  history: z.array(
    z.object({
      at: z.string(),
      state: z.enum(MONITOR_STATES),
      previous_state: z.enum(MONITOR_STATES),
      value: z.number().nullable(),
    }),
  ),
  deliveries: z.array(MonitorDeliverySchema),
  series: z.array(MonitorPointSchema),
});

/** `POST /monitors/preview`: a monitor's metric over the last 24 hours, before it is saved. */
export const MonitorPreviewRequestSchema = z
  .object({
    project_name: ProjectName.nullish(),
    project_uuid: OptionalUuid,
    metric: monitorFields.metric,
    score_name: monitorFields.score_name,
    filters: monitorFields.filters.default([]),
    window_minutes: monitorFields.window_minutes,
  })
  .superRefine(scoreNamed);

export const MonitorPreviewSchema = z.object({ series: z.array(MonitorPointSchema) });

/**
 * What a webhook channel receives on a change of state (POSTed as JSON, signed in `x-sightline-signature`:
 * `sha256=` and the hex HMAC-SHA256 of the raw body with the channel's secret).
 */
export const MonitorNotificationSchema = z.object({
  monitor: z.object({ id: z.string(), name: z.string(), project: z.string() }),
  state: z.enum(MONITOR_STATES),
  previous_state: z.enum(MONITOR_STATES),
  value: z.number().nullable(),
  /** The bound crossed (above and below), or the median of the previous 7 days (anomaly). */
  threshold: z.number().nullable().optional(),
  baseline: z.number().nullable().optional(),
  window: z.object({ from: z.string(), to: z.string() }),
  console_url: z.string(),
});
export type MonitorNotification = z.infer<typeof MonitorNotificationSchema>;

/** The scheduler's run: evaluate every enabled monitor, and queue the deliveries left pending. */
export const MonitorEvaluateJobSchema = z.object({});
/** One delivery of a change of state to one channel. */
export const MonitorDeliveryJobSchema = z.object({ delivery_id: Uuid });
