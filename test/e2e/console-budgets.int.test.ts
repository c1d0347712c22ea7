import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { useConsole } from '../support/console-browser';

// Budgets in the console, in a real browser against the processes `npm start` runs: a blocking budget made
// in its form stops the organization's completions (to a fake provider) at its limit, and the page shows
// its bar of spend against the limit beside an alert-only budget.
const openai = new FakeOpenAI();
beforeAll(() => openai.start());
afterAll(() => openai.stop());
const session = useConsole('budgets-e2e', {
  env: () => ({ OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-e2e' }),
});
let page: Page;

async function api(method: string, path: string, body?: object) {
  return fetch(`${session.api}${path}`, {
    method,
    headers: { 'x-api-key': session.keys.admin, 'content-type': 'application/json' },
    ...(body && { body: JSON.stringify(body) }),
  });
}

beforeAll(() => {
  page = session.page;
});

describe('budgets in the console', { timeout: 90_000 }, () => {
  it('makes a blocking budget in its form, is refused at its limit, and sees the bar of spend', async () => {
    await session.signIn(session.keys.admin);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Budgets' }).click();
    await page.getByRole('heading', { name: 'No budgets yet' }).waitFor();
    await session.checkA11y('budgets-empty');
    await page.getByRole('button', { name: 'Create budget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create budget' });
    await dialog.getByRole('textbox', { name: /^Limit/ }).fill('0.01');
    await dialog.getByText('Day', { exact: true }).click();
    // The segmented control's indicator slides to its choice before the picture is taken.
    await expect.poll(() => dialog.getByRole('radio', { name: 'Day' }).isChecked()).toBe(true);
    await expect
      .poll(() =>
        page.evaluate(
          'document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Infinity)',
        ),
      )
      .toBe(true);
    await session.shot('budget-form');
    await session.checkA11y('budget-form');
    await dialog.getByRole('button', { name: 'Create budget' }).click();
    await dialog.waitFor({ state: 'detached' });
    const made = await api('POST', '/budgets', {
      scope: { kind: 'project', project_name: 'support-bot' },
      limit_usd: 0.005,
      period: 'month',
      action: 'alert',
      alert_at: [0.5, 1],
    });
    expect(made.status, await made.text()).toBe(200);

    // gpt-4 calls of the project until the organization's budget refuses one.
    let refused: Response | null = null;
    for (let i = 0; i < 50 && !refused; i++) {
      const res = await api('POST', '/completion', {
        project_name: 'support-bot',
        llm_configuration: {
          provider: 'openai',
          model: 'gpt-4',
          messages: [{ role: 'user', content: 'hello' }],
          model_params: { max_tokens: 20 },
        },
      });
      if (res.status === 429) refused = res;
      else expect(res.status, await res.text()).toBe(200);
    }
    expect(refused).not.toBeNull();
    expect(((await refused!.json()) as { detail: string }).detail).toMatch(
      /^budget exceeded: the organization has spent \$0\.01 of \$0\.01 this day$/,
    );
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);

    await page.reload();
    const table = page.getByRole('table', { name: 'Budgets' });
    await table.getByRole('progressbar', { name: /^The organization: \d+% of the limit spent$/ }).waitFor();
    await table.getByRole('progressbar', { name: /^Project support-bot: \d+% of the limit spent$/ }).waitFor();
    await session.shot('budgets');
    await session.expectIdle('the budgets');
    await session.checkA11y('budgets');
  });
});
