import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, invalid, pending, requestsTo, server } from '../../test/api';
import { admin, budget, BUDGET_ID, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import BudgetsPage from './BudgetsPage';

const open = () => renderPage(<BudgetsPage />, { route: '/budgets', path: '/budgets' });

const user = userEvent.setup({ delay: null });

async function fill(input: HTMLElement, text: string) {
  await user.clear(input);
  await user.click(input);
  await user.paste(text);
}

beforeEach(() => {
  server.use(answer('me', admin));
});

describe('the budgets page', () => {
  it('shows that the budgets are loading', async () => {
    server.use(pending('budgets'));
    open();
    expect(await screen.findByText('Loading the budgets…')).toBeTruthy();
  });

  it('says what a budget does when there is none, and offers an admin to create one', async () => {
    server.use(answer('budgets', []));
    open();
    expect(await screen.findByRole('heading', { name: 'No budgets yet' })).toBeTruthy();
    expect(screen.getByText(/refuses calls past the limit/)).toBeTruthy();
    expect(screen.getAllByRole('button', { name: 'Create budget' })).toHaveLength(1);
  });

  it('shows why the budgets could not load, and retries', async () => {
    server.use(answer('budgets', [budget()]));
    server.use(fail('budgets', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/the database is unavailable/);
    await user.click(within(alert).getByRole('button', { name: /retry/i }));
    expect(await screen.findByRole('table', { name: 'Budgets' })).toBeTruthy();
  });

  it("shows each budget's bar of spend against its limit, its period's end, action and alerts", async () => {
    server.use(
      answer('budgets', [
        budget(),
        budget({
          id: 'e0000000-0000-4000-8000-0000000000b2',
          scope: { kind: 'organization' },
          limit_usd: 100,
          period: 'month',
          action: 'alert',
          alert_at: [0.9],
          channels: [],
          spent_usd: 12,
          reserved_usd: 0,
          remaining_usd: 88,
          alerts: [],
        }),
      ]),
    );
    open();
    const table = await screen.findByRole('table', { name: 'Budgets' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(within(first!).getByRole('progressbar', { name: 'Project demo: 82% of the limit spent' })).toBeTruthy();
    expect(first!.textContent).toMatch(/\$4\.10 of \$5\.00 · \$0\.9 left · \$0\.02 reserved/);
    expect(first!.textContent).toMatch(/Block/);
    expect(first!.textContent).toMatch(/50%, 80%, 100%/);
    expect(first!.textContent).toMatch(/webhook/);
    // How each share reached this period was told.
    expect(first!.textContent).toMatch(/50% reached · told/);
    expect(first!.textContent).toMatch(/80% reached · retrying \(2 attempts\)/);
    expect(first!.querySelector('time')!.getAttribute('datetime')).toBe('2026-03-03T00:00:00.000Z');
    expect(within(second!).getByRole('progressbar', { name: 'The organization: 12% of the limit spent' })).toBeTruthy();
    expect(second!.textContent).toMatch(/Alert/);
    expect(second!.textContent).toMatch(/no channels/);
    expect(second!.textContent).not.toMatch(/reached/);
  });

  it('creates a budget, showing a refusal beside its field', async () => {
    server.use(answer('budgets', [budget()]), answer('createBudget', budget()));
    server.use(invalid('createBudget', [{ loc: ['body', 'limit_usd'], msg: 'Too big' }], { once: true }));
    open();
    await user.click(await screen.findByRole('button', { name: 'Create budget' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create budget' });
    await user.click(within(dialog).getByRole('combobox', { name: 'Whose spend' }));
    await user.click(await screen.findByRole('option', { name: 'An end user' }));
    await fill(within(dialog).getByLabelText(/^End user identifier/), 'ann');
    await fill(within(dialog).getByLabelText(/^Limit/), '2.5');
    await user.click(within(dialog).getByText('Day'));
    await fill(within(dialog).getByLabelText(/^Alert at/), '80, 100');
    await user.click(within(dialog).getByRole('button', { name: 'Create budget' }));
    expect(await within(dialog).findByText('Too big')).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Create budget' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(requestsTo('createBudget').at(-1)!.body).toEqual({
      scope: { kind: 'end_user', end_user_identifier: 'ann' },
      limit_usd: 2.5,
      period: 'day',
      action: 'block',
      alert_at: [0.8, 1],
      channels: [],
    });
  });

  it("edits a budget's limit, keeping its webhook's secret, and deletes a budget", async () => {
    server.use(answer('budgets', [budget()]), answer('updateBudget', budget({ limit_usd: 8 })));
    server.use(answer('deleteBudget', { id: BUDGET_ID, deleted: true }));
    open();
    await user.click(await screen.findByRole('button', { name: 'Edit the budget of project demo' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit budget' });
    await fill(within(dialog).getByLabelText(/^Limit/), '8');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(requestsTo('updateBudget')).toHaveLength(1));
    expect(requestsTo('updateBudget')[0]!.body).toEqual({
      limit_usd: 8,
      period: 'day',
      action: 'block',
      alert_at: [0.5, 0.8, 1],
      channels: [{ kind: 'webhook', url: 'https://hooks.example.com/budgets' }],
    });
    vi.spyOn(window, 'confirm').mockReturnValue(true);
    await user.click(screen.getByRole('button', { name: 'Delete the budget of project demo' }));
    await waitFor(() => expect(requestsTo('deleteBudget')).toHaveLength(1));
  });

  it('shows a viewer the budgets without the controls to change them', async () => {
    server.use(answer('me', viewer), answer('budgets', [budget()]));
    open();
    expect(await screen.findByRole('table', { name: 'Budgets' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Create budget' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Edit/ })).toBeNull();
  });
});
