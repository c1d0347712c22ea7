import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { session } from '../../api/session';
import { answer, fail, pending, requests, requestsTo, server } from '../../test/api';
import { grace } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import AcceptInvitationPage from './AcceptInvitationPage';

const open = (query = '?token=tok_abc') =>
  renderPage(<AcceptInvitationPage />, { route: `/accept-invitation${query}`, signedIn: false });

const preview = {
  email: 'grace@example.com',
  role: 'member',
  organization_name: 'Acme',
  existing_account: false,
  password: true,
  sso: null,
} as const;
const joined = {
  user: { id: grace.id, email: grace.email, name: grace.name },
  organization_id: '0c9b8a7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d',
  role: 'member',
  must_change_password: false,
} as const;

describe('the invitation page', () => {
  it('reads the invitation first', async () => {
    server.use(pending('invitationPreview'));
    open();
    expect(await screen.findByText('Reading the invitation…')).toBeTruthy();
    expect(requestsTo('invitationPreview')[0]!.query).toEqual({ token: 'tok_abc' });
  });

  it('creates the account of someone new, and goes into the console', async () => {
    server.use(answer('invitationPreview', preview), answer('acceptInvitation', joined));
    open();
    expect(await screen.findByRole('heading', { name: 'Join Acme' })).toBeTruthy();
    expect(screen.getByText('grace@example.com')).toBeTruthy();
    expect(screen.getByText('member')).toBeTruthy();
    const form = screen.getByRole('form', { name: 'Accept the invitation' });
    await userEvent.type(within(form).getByRole('textbox', { name: /^Your name/ }), 'Grace Hopper');
    await userEvent.type(within(form).getByLabelText(/^Password/), 'too short');
    expect(within(form).getByRole('button', { name: 'Create my account' }).hasAttribute('disabled')).toBe(true);
    await userEvent.type(within(form).getByLabelText(/^Password/), ' no more');
    await userEvent.click(within(form).getByRole('button', { name: 'Create my account' }));
    expect(await screen.findByText('Now at /projects')).toBeTruthy();
    expect(requestsTo('acceptInvitation')[0]).toMatchObject({
      body: { token: 'tok_abc', name: 'Grace Hopper', password: 'too short no more' },
      csrf: '1',
    });
    expect(session.get().status).toBe('signed-in');
  });

  it('asks an existing account for its password only', async () => {
    server.use(answer('invitationPreview', { ...preview, existing_account: true }), answer('acceptInvitation', joined));
    open();
    const form = await screen.findByRole('form', { name: 'Accept the invitation' });
    expect(within(form).queryByRole('textbox', { name: /^Your name/ })).toBeNull();
    await userEvent.type(within(form).getByLabelText(/^Your password/), 'her own password');
    await userEvent.click(within(form).getByRole('button', { name: 'Join Acme' }));
    expect(await screen.findByText('Now at /projects')).toBeTruthy();
    expect(requestsTo('acceptInvitation')[0]!.body).toEqual({ token: 'tok_abc', password: 'her own password' });
  });

  it("says when an existing account's password is wrong", async () => {
    server.use(
      answer('invitationPreview', { ...preview, existing_account: true }),
      fail('acceptInvitation', 401, 'wrong email or password'),
    );
    open();
    const form = await screen.findByRole('form', { name: 'Accept the invitation' });
    await userEvent.type(within(form).getByLabelText(/^Your password/), 'not hers');
    await userEvent.click(within(form).getByRole('button', { name: 'Join Acme' }));
    expect((await within(form).findByRole('alert')).textContent).toMatch(/^Wrong password for this account\./);
  });

  it('says a used, revoked or expired invitation is not valid, and what to do', async () => {
    server.use(fail('invitationPreview', 404, 'this invitation is not valid: it was used, revoked or has expired'));
    open();
    expect((await screen.findByRole('alert')).textContent).toBe(
      'This invitation is not valid: it was used, revoked or has expired. Ask the admin who invited you for a new one.',
    );
    expect(screen.getByRole('link', { name: 'Sign in' }).getAttribute('href')).toBe('/sign-in');
  });

  it('says so when the link has no token, without asking the server', async () => {
    open('');
    expect((await screen.findByRole('alert')).textContent).toMatch(/^This link has no invitation in it/);
    expect(requests).toHaveLength(0);
  });

  it('shows a server failure with a retry', async () => {
    server.use(fail('invitationPreview', 503, 'the database is unavailable'));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Could not read the invitation')).toBeTruthy();
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeTruthy();
  });

  it('offers single sign-on beside the password, for the invitation itself', async () => {
    server.use(answer('invitationPreview', { ...preview, sso: { name: 'Acme SSO' } }));
    open();
    expect(await screen.findByRole('form', { name: 'Accept the invitation' })).toBeTruthy();
    const sso = screen.getByRole('link', { name: 'Accept with Acme SSO' });
    expect(sso.getAttribute('href')).toBe('/api/svc/v1/auth/oidc/start?invitation=tok_abc');
  });

  it('asks an account that signs in with SSO for no password', async () => {
    server.use(
      answer('invitationPreview', { ...preview, existing_account: true, password: false, sso: { name: 'Acme SSO' } }),
    );
    open();
    expect(await screen.findByText('Accept with Acme SSO, signed in there as grace@example.com.')).toBeTruthy();
    expect(screen.queryByRole('form', { name: 'Accept the invitation' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Accept with Acme SSO' })).toBeTruthy();
  });

  it('says what to do when neither a password nor SSO can accept it', async () => {
    server.use(answer('invitationPreview', { ...preview, existing_account: true, password: false }));
    open();
    expect((await screen.findByRole('alert')).textContent).toMatch(
      /no longer offers\. Ask the admin who invited you\./,
    );
    expect(screen.queryByRole('form')).toBeNull();
  });
});
