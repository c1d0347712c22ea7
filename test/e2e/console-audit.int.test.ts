import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { useConsole } from '../support/console-browser';

// The audit log in the console, in a real browser against the processes `npm start` runs: changes made
// through the API by an admin and a member (keys, a provider key, a dataset, an evaluation rule) found from
// the settings, filtered by kind and by key, one opened to what it changed; and a viewer kept out.
const tag = randomUUID().slice(0, 6);
const session = useConsole('audit-e2e', { env: () => ({ SECRETS_KEY: randomBytes(32).toString('hex') }) });
let page: Page;

async function api(method: string, path: string, body?: object, key = session.keys.admin): Promise<any> {
  const res = await fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    ...(body && { body: JSON.stringify(body) }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return res.json();
}

beforeAll(async () => {
  page = session.page;
  const member = await api('POST', '/api-keys', { role: 'member', label: 'mia@example.com' });
  await api('POST', '/provider-keys', { provider: 'openai', api_key: `sk-${randomBytes(16).toString('hex')}` });
  await api('POST', '/provider-keys', {
    provider: 'openai',
    api_key: `sk-${randomBytes(16).toString('hex')}`,
    rpm: 600,
  });
  await api('POST', '/eval-metrics', { name: 'mentions-refund', type: 'contains', config: { value: 'refund' } });
  const rule = await api(
    'POST',
    '/eval-rules',
    { name: `refunds-${tag}`, project_name: `support-${tag}`, metric_names: ['mentions-refund'], sample_rate: 0.5 },
    member.key,
  );
  await api('PATCH', `/eval-rules/${rule.id}`, { sample_rate: 0.1, enabled: false });
  const dataset = await api('POST', '/collection', { name: `faq-${tag}`, column_names: ['question'], test_cases: [] });
  await api('PATCH', `/datasets/${dataset.id}`, { name: `faq-${tag}-v2` }, member.key);
}, 60_000);

describe('the audit log in the console', { timeout: 60_000 }, () => {
  it('shows an admin who changed what, filtered by kind and key, and what a change changed', async () => {
    await session.signIn(session.keys.admin);
    await page.getByRole('link', { name: 'Settings' }).first().click();
    await page.getByRole('link', { name: 'Audit log' }).click();
    const log = page.getByRole('table', { name: 'Audit log' });
    await log.getByRole('row', { name: /faq-.*-v2/ }).waitFor();
    await session.shot('audit-log');
    await session.expectIdle('the audit log');
    await session.checkA11y('audit-log');

    await page.getByRole('combobox', { name: 'Kind of target' }).click();
    await page.getByRole('option', { name: 'Eval rule' }).click();
    await page.waitForURL(/kind=eval_rule/);
    // The URL moves before the page renders the filtered log: wait for the unfiltered rows to go first.
    await expect.poll(() => log.getByRole('row', { name: /faq-/ }).count()).toBe(0);
    const changed = log.getByRole('row', { name: /changed/ });
    await changed.waitFor();
    await changed.getByRole('button', { name: /^Details of/ }).click();
    const changes = page.getByRole('table', { name: `Changes to refunds-${tag}` });
    await changes.waitFor();
    await expect(changes.getByRole('row').allTextContents()).resolves.toEqual([
      'FieldBeforeAfter',
      'enabledtruefalse',
      'sample_rate0.50.1',
    ]);
    await session.shot('audit-log-change');
    await session.checkA11y('audit-log-change');

    // Only the member's changes (the rule they made, the dataset they renamed), from a row or the filter.
    const actors = () => log.locator('tbody tr td:nth-child(2)').allTextContents();
    await page.getByRole('button', { name: 'Only changes by mia@example.com' }).first().click();
    await page.waitForURL(/actor=.*kind=eval_rule|kind=eval_rule.*actor=/);
    await expect.poll(actors).toEqual(['mia@example.commember']);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((url) => !url.search);
    await page.getByRole('combobox', { name: 'Actor' }).click();
    await page.getByRole('option', { name: 'mia@example.com (member)' }).click();
    await page.waitForURL(/actor=/);
    await expect.poll(actors).toEqual(['mia@example.commember', 'mia@example.commember']);
    await log.getByRole('row', { name: /renamed/ }).waitFor();
  });

  it('keeps a viewer out', async () => {
    await page.getByRole('button', { name: /^Account:/ }).click();
    // An admin finds the log from the account menu too.
    await page.getByRole('menuitem', { name: 'Audit log' }).waitFor();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByText('You signed out.').waitFor();
    await session.signIn(session.keys.viewer);
    await page.getByRole('link', { name: 'Projects' }).first().waitFor();
    await page.goto(`${session.origin}/settings/audit-log`);
    await page.getByRole('heading', { name: 'The audit log is for admins' }).waitFor();
  });
});
