import { createHmac } from 'node:crypto';
import type { MonitorJudgement } from '@sightline/core';
import type { Monitor } from '@sightline/db';
import type { BudgetNotification, MonitorNotification, MonitorState } from '@sightline/schemas';

/** The traces page's preset ranges, in minutes: a link opens the smallest that covers the window. */
const RANGES: [number, string][] = [
  [60, '1h'],
  [180, '3h'],
  [360, '6h'],
  [1440, '24h'],
];

/**
 * Where the console shows the traces behind a reading: the monitor's project's traces page over the
 * window (the smallest preset range holding it), with every filter of the monitor (each a `filter` entry,
 * `[field, operator, value, key]` as the page reads it), and errors only for an error-rate monitor.
 */
function consoleUrl(publicUrl: string, m: Pick<Monitor, 'project_id' | 'metric' | 'filters' | 'window_minutes'>) {
  const params = new URLSearchParams();
  params.set('range', RANGES.find(([minutes]) => minutes >= m.window_minutes)?.[1] ?? '24h');
  if (m.metric === 'error_rate') params.set('status', 'error');
  for (const f of m.filters) {
    const entry = f.key
      ? [f.field, f.operator, f.value ?? '', f.key]
      : [f.field, f.operator, ...(f.value != null ? [f.value] : [])];
    params.append('filter', JSON.stringify(entry));
  }
  return `${publicUrl.replace(/\/+$/, '')}/projects/${m.project_id}/traces?${params}`;
}

/** The notification of a change of state, as a webhook receives it (MonitorNotificationSchema). */
export function notificationOf(
  m: Monitor,
  judged: MonitorJudgement,
  previous: MonitorState,
  windowEnd: Date,
  publicUrl: string,
): MonitorNotification {
  return {
    monitor: { id: m.id, name: m.name, project: m.project_name },
    state: judged.state,
    previous_state: previous,
    value: judged.value,
    ...('anomaly' in m.condition ? { baseline: judged.baseline ?? null } : { threshold: judged.threshold ?? null }),
    window: {
      from: new Date(windowEnd.getTime() - m.window_minutes * 60_000).toISOString(),
      to: windowEnd.toISOString(),
    },
    console_url: consoleUrl(publicUrl, m),
  };
}

/** `x-sightline-signature`: the hex HMAC-SHA256 of the raw body with the channel's secret. */
export const signatureOf = (body: string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const STATE_WORDS: Record<MonitorState, string> = { firing: 'Firing', ok: 'Resolved', no_data: 'No data' };

/** Slack's incoming-webhook message for a notification: a line of text, and blocks with the figures. */
export function slackMessage(n: MonitorNotification) {
  const word = n.state === 'ok' && n.previous_state === 'no_data' ? 'OK' : STATE_WORDS[n.state];
  const value = n.value === null ? 'no value' : `${Number(n.value.toPrecision(4))}`;
  const bound =
    n.threshold != null
      ? ` (threshold ${n.threshold})`
      : n.baseline != null
        ? ` (usual ${Number(n.baseline.toPrecision(4))})`
        : '';
  const text = `${word}: ${n.monitor.name} on ${n.monitor.project} is ${value}${bound}`;
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `Window ${n.window.from} – ${n.window.to} · was ${n.previous_state}` },
          { type: 'mrkdwn', text: `<${n.console_url}|Open the traces>` },
        ],
      },
    ],
  };
}

/** Whose spend a budget limits, in words. */
export function describeBudgetScope(scope: BudgetNotification['budget']['scope']): string {
  switch (scope.kind) {
    case 'organization':
      return 'the organization';
    case 'project':
      return `project ${scope.project_name}`;
    case 'api_key':
      return `API key ${scope.api_key_id}`;
    default:
      return `end user ${scope.end_user_identifier}`;
  }
}

/** An amount in a budget's words: "$4.98". */
export const usd = (n: number) => `$${n.toFixed(2)}`;

/** Slack's incoming-webhook message for a budget's alert. */
export function budgetSlackMessage(n: BudgetNotification) {
  const { budget } = n;
  const text = `Budget of ${describeBudgetScope(budget.scope)}: ${Math.round(n.share * 100)}% reached (${usd(n.spent_usd)} of ${usd(budget.limit_usd)} this ${budget.period})`;
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `The period ends ${n.period_ends_at}` }] },
    ],
  };
}
