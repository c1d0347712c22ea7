import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../monitors/webhook-receiver';
import { createChaosStack, sleep, type ChaosStack, type ManagedProcess } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiCaller } from './lib/http';

// Fault 7: a monitor fires while two worker processes run its scheduler and deliveries, and both are
// killed with SIGKILL while the receiver is still answering the notification. The change of state is
// recorded once, with one delivery; the delivery's job is redelivered to the workers started again, and
// the notification arrives, under one delivery id however many times it was sent (a receiver that has
// it already tells the repeat by that id).

const SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const receiver = new WebhookReceiver(SECRET);

let stack: ChaosStack;
beforeAll(async () => {
  await receiver.start();
  stack = await createChaosStack('monitor-kill', {
    env: {
      SECRETS_KEY: randomBytes(32).toString('hex'),
      ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      MONITOR_INTERVAL_SECONDS: '1',
      MONITOR_RETRY_BASE_MS: '200',
      MONITOR_DELIVERY_TIMEOUT_MS: '30000',
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await receiver.stop();
});

describe('a monitor whose workers are killed while it notifies', () => {
  it('records one change, and delivers it under one delivery id', async () => {
    const api = await stack.startApi();
    const workers: ManagedProcess[] = [await stack.startWorker(), await stack.startWorker()];
    const call = apiCaller(api.base, stack.key);
    const monitor = await call('POST', '/monitors', {
      name: 'errors',
      project_name: 'chaos',
      metric: 'error_rate',
      window_minutes: 10,
      condition: { above: 0.5 },
      min_samples: 3,
      channels: [{ kind: 'webhook', url: `${receiver.url}/hook`, secret: SECRET }],
    });
    // The first request is held for 10 s: the workers die while it is open.
    receiver.slowNext(1, 10_000);
    const now = Date.now();
    await call('POST', '/trace_logs/batch', {
      trace_logs: Array.from({ length: 5 }, (_, i) => ({
        trace_id: randomUUID(),
        project_name: 'chaos',
        trace_name: 'answer',
        start_timestamp: new Date(now + i).toISOString(),
        end_timestamp: new Date(now + i + 100).toISOString(),
        status: 'error',
        error: 'timed out',
      })),
    });
    const started = Date.now();
    while (receiver.attempts === 0) {
      if (Date.now() - started > 60_000) throw new Error('the monitor never notified');
      await sleep(50);
    }
    const sentAt = seconds(Date.now() - started);
    await Promise.all(workers.map((w) => w.signal('SIGKILL')));
    await stack.startWorker();
    await stack.startWorker();

    for (;;) {
      const [d] = (await call('GET', `/monitors/${monitor.id}`)).deliveries;
      if (d?.status === 'delivered') break;
      if (Date.now() - started > 120_000) throw new Error(`delivery stuck: ${JSON.stringify(d)}`);
      await sleep(250);
    }
    // The held request ends too (its sender is gone): every request that arrived is in.
    await sleep(11_000);
    const [events] = await stack.sql`
      select count(*)::int as changes, (select count(*)::int from monitor_deliveries where monitor_id = ${monitor.id}) as deliveries
      from monitor_events where monitor_id = ${monitor.id}`;
    const arrived = receiver.at('/hook');
    recordFigures('monitor-delivery-kill', {
      killed_after_s: sentAt,
      delivered_after_s: seconds(Date.now() - started) - 11,
      requests: receiver.attempts,
      arrived: arrived.length,
      ...events,
    });
    expect(events).toEqual({ changes: 1, deliveries: 1 });
    expect(arrived.length).toBeGreaterThanOrEqual(1);
    expect(new Set(arrived.map((r) => r.delivery)).size).toBe(1);
    expect(arrived.every((r) => r.signed && r.body.state === 'firing')).toBe(true);
  });
});
