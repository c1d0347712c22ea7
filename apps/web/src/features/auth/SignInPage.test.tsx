import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { session } from '../../api/session';
import { answer, fail, pending, requests, requestsTo, server } from '../../test/api';
import { admin } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import SignInPage from './SignInPage';

const open = (query = '?next=/datasets') => renderPage(<SignInPage />, { route: `/sign-in${query}`, signedIn: false });

const PASSWORD_ONLY = { password: true, sso: null, bootstrap: false };
const signedIn = {
  user: admin.user,
  organization_id: admin.organization_id,
  role: 'admin',
  must_change_password: false,
} as const;

async function withPassword(email: string, password: string) {
  await userEvent.type(await screen.findByRole('textbox', { name: 'Email' }), email);
  await userEvent.type(screen.getByLabelText(/^Password/), password);
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

async function withKey(key: string) {
  await userEvent.click(await screen.findByRole('button', { name: 'Use an API key instead' }));
  if (key) await userEvent.type(screen.getByLabelText('API key'), key);
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

beforeEach(() => {
  server.use(answer('signInOptions', PASSWORD_ONLY));
});

describe('the sign-in page', () => {
  it('signs in with an email and password, from the console, and goes where the person was heading', async () => {
    server.use(answer('login', signedIn));
    open();
    await withPassword('ada@example.com', 'correct horse battery');
    expect(await screen.findByText('Now at /datasets')).toBeTruthy();
    expect(requestsTo('login')[0]).toMatchObject({
      body: { email: 'ada@example.com', password: 'correct horse battery' },
      csrf: '1',
    });
    expect(session.get().status).toBe('signed-in');
    // A page opened after a sign-out knows there is no session: it asks the server only how to sign in.
    expect(requestsTo('me')).toHaveLength(0);
  });

  it('says a wrong email or password without telling which, and stays', async () => {
    server.use(fail('login', 401, 'wrong email or password'));
    open();
    await withPassword('ada@example.com', 'not it');
    expect((await screen.findByRole('alert')).textContent).toMatch(/^Wrong email or password\. Check both/);
    expect(screen.queryByText(/^Now at/)).toBeNull();
    expect(session.get().status).toBe('signed-out');
  });

  it('says how long to wait once sign-ins are locked', async () => {
    server.use(fail('login', 429, 'too many failed sign-ins for this email; try again in 15 min'));
    open();
    await withPassword('ada@example.com', 'not it either');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Sign-in is paused: too many failed sign-ins for this email; try again in 15 min.',
    );
  });

  it("gives the server's reason for a refusal", async () => {
    server.use(fail('login', 403, 'you belong to no organization on this server: ask an admin for an invitation'));
    open();
    await withPassword('ada@example.com', 'correct horse battery');
    expect((await screen.findByRole('alert')).textContent).toBe(
      'You belong to no organization on this server: ask an admin for an invitation.',
    );
  });

  it('waits for the answer with the button busy', async () => {
    server.use(pending('login'));
    open();
    await withPassword('ada@example.com', 'correct horse battery');
    expect(screen.getByRole('button', { name: 'Sign in' }).hasAttribute('data-loading')).toBe(true);
  });

  it('offers single sign-on, and no password form when the server takes none', async () => {
    server.use(answer('signInOptions', { password: false, sso: { name: 'Okta' }, bootstrap: false }));
    open();
    const sso = await screen.findByRole('link', { name: 'Sign in with Okta' });
    expect(sso.getAttribute('href')).toBe('/api/svc/v1/auth/oidc/start');
    expect(screen.queryByRole('textbox', { name: 'Email' })).toBeNull();
    // A program's key still signs in.
    expect(screen.getByRole('button', { name: 'Use an API key instead' })).toBeTruthy();
  });

  it('offers both when both are on', async () => {
    server.use(answer('signInOptions', { password: true, sso: { name: 'Okta' }, bootstrap: false }));
    open();
    expect(await screen.findByRole('link', { name: 'Sign in with Okta' })).toBeTruthy();
    expect(screen.getByRole('textbox', { name: 'Email' })).toBeTruthy();
  });

  it('shows why single sign-on sent the person back', async () => {
    open('?error=the domain evil.example is not allowed on this server');
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Not signed in')).toBeTruthy();
    expect(within(alert).getByText('the domain evil.example is not allowed on this server')).toBeTruthy();
  });

  it('says why the last session ended', async () => {
    open();
    await screen.findByRole('textbox', { name: 'Email' });
    act(() => session.signOut('You were signed out: your session has ended: sign in again.'));
    expect(await screen.findByText('You were signed out: your session has ended: sign in again.')).toBeTruthy();
  });

  it('cannot say how to sign in while the server is down, and retries', async () => {
    server.use(answer('signInOptions', PASSWORD_ONLY));
    server.use(fail('signInOptions', 503, 'the database is unavailable', { once: true }));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/The server could not answer \(503\)/)).toBeTruthy();
    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('textbox', { name: 'Email' })).toBeTruthy();
  });

  describe('with an API key', () => {
    it('asks for a key before calling the server', async () => {
      open();
      await withKey('');
      expect(await screen.findByText('Paste an API key first.')).toBeTruthy();
      expect(requests.filter((r) => r.route !== 'signInOptions')).toHaveLength(0);
    });

    it('refuses a key the server does not know, and stays', async () => {
      server.use(fail('keySignIn', 401, 'invalid API key'));
      open();
      await withKey('sl_wrong-key');
      expect(await screen.findByText(/This API key is not valid on this server/)).toBeTruthy();
      expect(screen.queryByText(/^Now at/)).toBeNull();
    });

    it('trades a valid key for a session, keeping no key in the browser', async () => {
      server.use(answer('keySignIn', { ...signedIn, user: null }));
      open();
      await withKey('  sl_right-key  ');
      expect(await screen.findByText('Now at /datasets')).toBeTruthy();
      // The key is trimmed before it is tried, and goes in the body of this one request.
      expect(requestsTo('keySignIn')[0]).toMatchObject({ body: { api_key: 'sl_right-key' }, csrf: '1' });
      expect(JSON.stringify({ ...sessionStorage })).not.toContain('sl_right-key');
      expect(JSON.stringify({ ...localStorage })).not.toContain('sl_right-key');
    });
  });

  describe('on a server with no one yet', () => {
    it('creates the first admin and signs them in', async () => {
      server.use(
        answer('signInOptions', { password: true, sso: null, bootstrap: true }),
        answer('bootstrap', signedIn),
      );
      open();
      const form = await screen.findByRole('form', { name: 'Create the first admin' });
      await userEvent.type(within(form).getByRole('textbox', { name: /^Email/ }), 'ada@example.com');
      await userEvent.type(within(form).getByRole('textbox', { name: 'Name' }), 'Ada Lovelace');
      await userEvent.type(within(form).getByLabelText(/^Password/), 'short');
      expect(within(form).getAllByText('At least 12 characters').length).toBeGreaterThan(0);
      expect(within(form).getByRole('button', { name: 'Create the admin and sign in' }).hasAttribute('disabled')).toBe(
        true,
      );
      await userEvent.type(within(form).getByLabelText(/^Password/), ' but now long enough');
      await userEvent.click(within(form).getByRole('button', { name: 'Create the admin and sign in' }));
      expect(await screen.findByText('Now at /datasets')).toBeTruthy();
      expect(requestsTo('bootstrap')[0]!.body).toEqual({
        email: 'ada@example.com',
        name: 'Ada Lovelace',
        password: 'short but now long enough',
      });
    });
  });
});
