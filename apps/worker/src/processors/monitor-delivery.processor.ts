import { unseal } from '@sightline/core';
import { findDelivery, recordAttempt, type Sql } from '@sightline/db';
import { nonPublicLiteral, publicOnlyFetch } from '@sightline/llm/base-url';
import type { BudgetNotification, MonitorNotification } from '@sightline/schemas';
import type { Processor } from '../register-worker';
import { budgetSlackMessage, signatureOf, slackMessage } from '../monitors/notification';

type Deps = {
  sql: Sql;
  secretsKey: Buffer | undefined;
  attempts: number;
  timeoutMs: number;
  /** ALLOW_PRIVATE_WEBHOOK_URLS: channels may reach loopback and private addresses. */
  allowPrivate: boolean;
};

/** What one attempt came to: the receiver's status, or why it could not be reached. */
type Attempt = { status_code: number | null; error: string | null; duration_ms: number };

/**
 * Sends one delivery: a monitor change's or a budget alert's notification, the same body on every attempt, signed for a webhook.
 * Each attempt is logged with the delivery; a refusal (non-2xx) or a timeout throws, and the job is tried
 * again with backoff until `attempts` have been made, when the delivery is marked failed. A delivery
 * already delivered (its job run again after a crash) is not sent again.
 */
export function monitorDeliveryProcessor(deps: Deps): Processor<'monitor-delivery'> {
  const fetchFor = deps.allowPrivate ? fetch : publicOnlyFetch;
  return async ({ delivery_id }, job, log) => {
    const delivery = await findDelivery(deps.sql, delivery_id);
    if (!delivery || delivery.status !== 'pending') return { skipped: delivery?.status ?? 'gone' };
    const { channel } = delivery;
    const slack = () =>
      delivery.source === 'budget'
        ? budgetSlackMessage(delivery.payload as BudgetNotification)
        : slackMessage(delivery.payload as MonitorNotification);
    const body = JSON.stringify(channel.kind === 'slack' ? slack() : delivery.payload);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': delivery.source === 'budget' ? 'Sightline-Budgets' : 'Sightline-Monitors',
      'x-sightline-delivery': delivery.id,
    };
    const started = performance.now();
    const attempt = async (): Promise<Attempt> => {
      const sealed = channel.kind === 'webhook' || channel.sealed_url;
      if (sealed && !deps.secretsKey)
        return { status_code: null, error: 'SECRETS_KEY is not set on the worker', duration_ms: 0 };
      const url =
        channel.kind === 'slack' && channel.sealed_url ? unseal(deps.secretsKey!, channel.sealed_url) : channel.url;
      const refused = deps.allowPrivate ? null : nonPublicLiteral(url);
      if (refused) return { status_code: null, error: `url refused: ${refused}`, duration_ms: 0 };
      if (channel.kind === 'webhook')
        headers['x-sightline-signature'] = signatureOf(body, unseal(deps.secretsKey!, channel.secret));
      try {
        const res = await fetchFor(url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(deps.timeoutMs),
        });
        await res.body?.cancel();
        const ok = res.status >= 200 && res.status < 300;
        return { status_code: res.status, error: ok ? null : `answered ${res.status}`, duration_ms: elapsed() };
      } catch (err) {
        const e = err as Error & { cause?: Error };
        const why =
          e.name === 'TimeoutError' ? `no answer within ${deps.timeoutMs} ms` : (e.cause?.message ?? e.message);
        return { status_code: null, error: why, duration_ms: elapsed() };
      }
    };
    const elapsed = () => Math.round(performance.now() - started);
    const result = await attempt();
    const last = job.attemptsMade + 1 >= deps.attempts;
    const outcome = result.error === null ? 'delivered' : last ? 'failed' : null;
    await recordAttempt(deps.sql, delivery.id, result, outcome);
    if (result.error !== null) {
      log.warn(
        { deliveryId: delivery.id, attempt: job.attemptsMade + 1, err: result.error },
        'monitor delivery failed',
      );
      if (!last) throw new Error(result.error);
    }
    return { outcome, attempt: job.attemptsMade + 1 };
  };
}
