import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server } from '../../test/api';
import { ADA_ID, admin, apiKey, criterion, evalMetric, keyAdmin, providerKey, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import SettingsPage from './SettingsPage';

const open = () => renderPage(<SettingsPage />, { route: '/settings' });

describe('the settings page', () => {
  it('tells a non-admin that settings are for admins', async () => {
    server.use(answer('me', viewer));
    open();
    expect(await screen.findByText('Your role is viewer. Ask an admin of Acme to manage keys.')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Settings are for admins' })).toBeTruthy();
    // Everyone sees who is in the organization.
    expect(screen.getByRole('link', { name: 'See the people of Acme' }).getAttribute('href')).toBe('/settings/people');
  });

  it('shows that the keys are loading', async () => {
    server.use(
      answer('me', admin),
      pending('apiKeys'),
      pending('providerKeys'),
      pending('criteria'),
      pending('evalMetrics'),
    );
    open();
    expect(await screen.findByText('Loading keys…')).toBeTruthy();
    expect(screen.getByText('Loading provider keys…')).toBeTruthy();
  });

  it('says what happens without provider keys or criteria', async () => {
    server.use(
      answer('me', admin),
      answer('apiKeys', [apiKey()]),
      answer('providerKeys', []),
      answer('criteria', []),
      answer('evalMetrics', []),
    );
    open();
    expect(
      await screen.findByText("No provider key saved: completions use the server's keys, if it has any."),
    ).toBeTruthy();
    expect(await screen.findByText('No criteria yet: create one below.')).toBeTruthy();
  });

  it('shows why the keys could not load, and retries', async () => {
    server.use(
      answer('me', admin),
      answer('apiKeys', [apiKey()]),
      answer('providerKeys', []),
      answer('criteria', []),
      answer('evalMetrics', []),
    );
    server.use(fail('apiKeys', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/\(503\): the database is unavailable/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'API keys' })).toBeTruthy();
    expect(requestsTo('apiKeys')).toHaveLength(2);
  });

  it("lists the organization's keys, provider keys and criteria", async () => {
    server.use(
      // Signed in with the first key: the table marks it.
      answer('me', keyAdmin),
      answer('apiKeys', [
        apiKey({ created_by: { id: ADA_ID, email: 'ada@example.com', name: 'Ada Lovelace' } }),
        apiKey({
          id: 'a1b2c3d4-0000-4000-8000-000000000002',
          label: 'ci-bot',
          role: 'member',
          api_key: 'wxyz',
          last_used_at: null,
        }),
      ]),
      answer('providerKeys', [providerKey]),
      answer('criteria', [criterion]),
      answer('evalMetrics', [evalMetric()]),
    );
    open();
    expect(await screen.findByText('Organization Acme')).toBeTruthy();
    const keys = await screen.findByRole('table', { name: 'API keys' });
    const [mine, bot] = within(keys).getAllByRole('row').slice(1);
    expect(within(mine!).getByText('this session')).toBeTruthy();
    expect(within(mine!).getByText('Ada Lovelace')).toBeTruthy();
    expect(within(bot!).getByText('service')).toBeTruthy();
    expect(within(bot!).queryByText('this session')).toBeNull();
    expect(within(bot!).getByText('member')).toBeTruthy();
    expect(within(bot!).getByText('never')).toBeTruthy();
    expect(within(bot!).getByRole('button', { name: 'Revoke the key ci-bot' })).toBeTruthy();

    const providers = await screen.findByRole('table', { name: 'Provider keys' });
    expect(within(providers).getByText('openai')).toBeTruthy();
    expect(within(providers).getByText("provider's own")).toBeTruthy();
    const criteria = await screen.findByRole('table', { name: 'Annotation criteria' });
    expect(within(criteria).getByText('helpfulness')).toBeTruthy();
    expect(within(criteria).getByText('1 to 5')).toBeTruthy();
  });
});
