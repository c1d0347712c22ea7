import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { ADA_ID, admin, apiKey, criterion, evalMetric, keyAdmin, providerKey, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import SettingsPage from './SettingsPage';

const open = () => renderPage(<SettingsPage />, { route: '/settings' });

describe('the settings page', () => {
  it("tells a session opened with a non-admin's key that settings are for admins", async () => {
    server.use(answer('me', { ...viewer, key_id: apiKey().id, user: null }));
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
    expect(await screen.findByText('Organization Acme · your role: admin')).toBeTruthy();
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

  it('lets a member make a key of their own, no higher than their role', async () => {
    const member = {
      ...viewer,
      role: 'member' as const,
      organizations: [{ ...viewer.organizations[0]!, role: 'member' as const }],
    };
    const made = apiKey({ label: 'my-script', role: 'viewer', created_by: { ...viewer.user! } });
    server.use(
      answer('me', member),
      answer('apiKeys', []),
      answer('createApiKey', { ...made, key: 'sl-abcdefabcdef' }),
    );
    open();
    expect(await screen.findByRole('heading', { name: 'Your API keys' })).toBeTruthy();
    expect(await screen.findByText(/You have made no key yet/)).toBeTruthy();
    await settled();
    // Provider keys, criteria and the audit log stay with admins.
    expect(screen.queryByText('Provider keys')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Audit log' })).toBeNull();

    await userEvent.click(screen.getByRole('button', { name: 'Create a key' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create an API key' });
    await userEvent.type(within(dialog).getByLabelText(/Label/), 'my-script');
    await userEvent.click(within(dialog).getByRole('combobox', { name: 'Role' }));
    const options = (await screen.findAllByRole('option')).map((o) => o.textContent);
    expect(options).toEqual(['member', 'viewer']);
    await userEvent.click(screen.getByRole('option', { name: 'viewer' }));
    expect(within(dialog).queryByLabelText("A service's key")).toBeNull();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await screen.findByTestId('new-key')).toBeTruthy();
    expect(requestsTo('createApiKey')[0]!.body).toEqual({ role: 'viewer', label: 'my-script', service: false });
  });

  it("lets an admin make a service's key, which has no maker", async () => {
    server.use(
      answer('me', admin),
      answer('apiKeys', [apiKey()]),
      answer('providerKeys', []),
      answer('criteria', []),
      answer('evalMetrics', []),
      answer('createApiKey', { ...apiKey({ label: 'ci-bot', role: 'member' }), key: 'sl-abcdefabcdef' }),
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Create a key' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create an API key' });
    await userEvent.type(within(dialog).getByLabelText(/Label/), 'ci-bot');
    await userEvent.click(within(dialog).getByLabelText("A service's key"));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await screen.findByTestId('new-key')).toBeTruthy();
    expect(requestsTo('createApiKey')[0]!.body).toEqual({ role: 'member', label: 'ci-bot', service: true });
  });
});
