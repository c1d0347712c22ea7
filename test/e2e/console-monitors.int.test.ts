import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../monitors/webhook-receiver';
import { writeSpans } from '../support/console-data';
import { useConsole } from '../support/console-browser';

// Monitors in the console, in a real browser against the processes `npm start` runs: a monitor made in
// its form (with the preview of its metric) fires on the project's failing traces, tells a webhook
// receiver on 127.0.0.1, and the page shows its state, its last day against the threshold, its change
// and its delivery.
const SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const receiver = new WebhookReceiver(SECRET);
const PROJECT = `checkout-${randomUUID().slice(0, 6)}`;
const session = useConsole('monitors-e2e', {
  env: () => ({
    SECRETS_KEY: randomBytes(32).toString('hex'),
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    MONITOR_INTERVAL_SECONDS: '1',
  }),
});
let page: Page;
let projectUuid = '';

async function api(method: string, path: string, body?: object): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    ...(body && { body: JSON.stringify(body) }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.json();
}

/** `n` traces of the project ending now, `errors` of them failed. */
async function traces(n: number, errors: number) {
  const now = Date.now();
  await writeSpans(
    session.api,
    session.keys.admin,
    Array.from({ length: n }, (_, i) => ({
      trace_id: randomUUID(),
      project_uuid: projectUuid,
      trace_name: 'checkout',
      start_timestamp: new Date(now - 60_000 + i * 100).toISOString(),
      end_timestamp: new Date(now - 59_000 + i * 100).toISOString(),
      status: i < errors ? 'error' : 'success',
      ...(i < errors && { error: 'payment provider timed out' }),
    })),
  );
}

beforeAll(async () => {
  await receiver.start();
  page = session.page;
  projectUuid = (await api('POST', '/project', { name: PROJECT })).uuid;
  await traces(20, 1);
}, 60_000);
afterAll(() => receiver.stop());

describe('monitors in the console', { timeout: 90_000 }, () => {
  it('makes a monitor from its form, sees it fire, and reads its change and delivery', async () => {
    await session.signIn(session.keys.admin);
    await page.goto(`${session.origin}/projects/${projectUuid}/monitors`);
    await page.getByRole('heading', { name: 'No monitors yet' }).waitFor();
    await session.checkA11y('monitors-empty');
    await page.getByRole('button', { name: 'Create monitor' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create monitor' });
    await dialog.getByRole('textbox', { name: /^Name/ }).fill('checkout errors');
    await dialog.getByRole('textbox', { name: /^Window/ }).fill('10');
    await dialog.getByRole('textbox', { name: 'Threshold' }).fill('0.2');
    await dialog.getByRole('textbox', { name: /^Minimum of traces/ }).fill('5');
    await dialog.getByRole('button', { name: 'Add webhook' }).click();
    await dialog.getByRole('textbox', { name: /^Webhook URL/ }).fill(`${receiver.url}/hook`);
    await dialog.getByLabel(/^Secret/).fill(SECRET);
    // The preview draws the last day: the traces written a minute ago are in its last hour.
    await dialog.getByRole('region', { name: 'Preview' }).getByRole('img').waitFor();
    await session.shot('monitor-form');
    await session.checkA11y('monitor-form');
    await dialog.getByRole('button', { name: 'Create monitor' }).click();
    const row = page.getByRole('table', { name: 'Monitors' }).getByRole('row', { name: /checkout errors/ });
    // The list is read every 30 s; a person who wants it sooner reloads, as the test does.
    const stateShown = (state: string) =>
      expect
        .poll(
          async () => {
            await page.reload();
            await row.waitFor();
            return row.getByText(state, { exact: true }).count();
          },
          { timeout: 30_000, interval: 1000 },
        )
        .toBe(1);
    await stateShown('OK');
    await traces(20, 15);
    await stateShown('Firing');
    await expect.poll(() => receiver.at('/hook').length, { timeout: 30_000 }).toBe(1);
    expect(receiver.at('/hook')[0]).toMatchObject({ signed: true, body: { state: 'firing', previous_state: 'ok' } });

    await row.getByRole('button', { name: 'History of checkout errors' }).click();
    await page.getByRole('table', { name: 'Deliveries of checkout errors' }).getByText('delivered').waitFor();
    // The history's tables sit on their panel: the list's cell of actions, kept in view, is its own rows' only.
    const attempts = page.getByRole('table', { name: 'Deliveries of checkout errors' }).getByRole('cell').last();
    expect(await attempts.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).position)).toBe('static');
    await session.shot('monitors');
    await session.expectIdle('the monitors');
    await session.checkA11y('monitors');
  });
});
