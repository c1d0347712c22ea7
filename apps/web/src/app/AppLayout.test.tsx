import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, requestsTo, server } from '../test/api';
import { admin, keyAdmin, ORGANIZATION_ID } from '../test/fixtures';
import { renderPage } from '../test/render';
import { AppLayout } from './AppLayout';

const OTHER_ORG = '9c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d';
const open = () => renderPage(<AppLayout />, { route: '/settings?tab=keys', path: '/settings' });
const menu = async () => userEvent.click(await screen.findByRole('button', { name: /^Account:/ }));

describe('the console frame', () => {
  it('sends a browser without a session to the sign-in page, keeping where it was going', async () => {
    server.use(fail('me', 401, 'missing API key: send it in the x-api-key header or as Authorization: Bearer <key>'));
    open();
    expect(await screen.findByText(`Now at /sign-in?next=${encodeURIComponent('/settings?tab=keys')}`)).toBeTruthy();
  });

  it('shows who is signed in: their name, email and role', async () => {
    server.use(answer('me', admin));
    open();
    const account = await screen.findByRole('button', { name: /^Account:/ });
    expect(within(account).getByText('Ada Lovelace')).toBeTruthy();
    expect(within(account).getByText('admin')).toBeTruthy();
    await menu();
    const dropdown = await screen.findByRole('menu');
    expect(within(dropdown).getByText('ada@example.com')).toBeTruthy();
    expect(within(dropdown).getByRole('menuitem', { name: 'People' })).toBeTruthy();
    // One organization: nothing to switch to.
    expect(within(dropdown).queryByText('Organizations')).toBeNull();
  });

  it("names a key's session by the key", async () => {
    server.use(answer('me', keyAdmin));
    open();
    await menu();
    expect(await screen.findByText('Signed in with the key ada@example.com')).toBeTruthy();
  });

  it('switches to another of the person’s organizations, and reads everything again', async () => {
    const both = [
      { id: ORGANIZATION_ID, name: 'Acme', role: 'admin' as const },
      { id: OTHER_ORG, name: 'Globex', role: 'viewer' as const },
    ];
    server.use(
      answer('me', () =>
        requestsTo('switchOrganization').length
          ? { ...admin, organization_id: OTHER_ORG, organization_name: 'Globex', role: 'viewer', organizations: both }
          : { ...admin, organizations: both },
      ),
      answer('switchOrganization', { detail: 'organization switched' }),
    );
    open();
    await menu();
    await userEvent.click(await screen.findByRole('menuitem', { name: /Globex/ }));
    expect(await screen.findByText('Now at /projects')).toBeTruthy();
    expect(requestsTo('switchOrganization')[0]).toMatchObject({ body: { organization_id: OTHER_ORG }, csrf: '1' });
    await waitFor(() => expect(requestsTo('me').length).toBeGreaterThan(1));
  });

  it('signs out on the server, then here', async () => {
    server.use(answer('me', admin), answer('logout', { detail: 'signed out' }));
    open();
    await menu();
    await userEvent.click(await screen.findByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByText(/^Now at \/sign-in/)).toBeTruthy();
    expect(requestsTo('logout')[0]!.csrf).toBe('1');
  });

  describe('with a one-time password', () => {
    const once = { ...admin, must_change_password: true };

    it('asks for a new password before anything else, then goes on', async () => {
      server.use(
        answer('me', () => (requestsTo('changePassword').length ? admin : once)),
        answer('changePassword', { detail: 'password changed' }),
      );
      open();
      const form = await screen.findByRole('form', { name: 'Choose your password' });
      expect(screen.queryByRole('navigation', { name: 'Main' })).toBeNull();
      await userEvent.type(within(form).getByLabelText(/^One-time password/), 'Xk3-once-only');
      await userEvent.type(within(form).getByLabelText(/^New password \*/), 'short');
      expect(within(form).getAllByText('At least 12 characters').length).toBeGreaterThan(0);
      await userEvent.type(within(form).getByLabelText(/^New password \*/), ' and now long');
      await userEvent.type(within(form).getByLabelText(/^New password, again/), 'short and not the same');
      expect(within(form).getByText('The two passwords differ')).toBeTruthy();
      await userEvent.clear(within(form).getByLabelText(/^New password, again/));
      await userEvent.type(within(form).getByLabelText(/^New password, again/), 'short and now long');
      await userEvent.click(within(form).getByRole('button', { name: 'Save and continue' }));
      expect(await screen.findByRole('navigation', { name: 'Main' })).toBeTruthy();
      expect(requestsTo('changePassword')[0]!.body).toEqual({
        current_password: 'Xk3-once-only',
        new_password: 'short and now long',
      });
    });

    it('says when the one-time password was wrong', async () => {
      server.use(answer('me', once), fail('changePassword', 403, 'the current password is wrong'));
      open();
      const form = await screen.findByRole('form', { name: 'Choose your password' });
      await userEvent.type(within(form).getByLabelText(/^One-time password/), 'not it');
      await userEvent.type(within(form).getByLabelText(/^New password \*/), 'a long new password');
      await userEvent.type(within(form).getByLabelText(/^New password, again/), 'a long new password');
      await userEvent.click(within(form).getByRole('button', { name: 'Save and continue' }));
      expect((await within(form).findByRole('alert')).textContent).toBe('The current password is wrong.');
    });
  });
});
