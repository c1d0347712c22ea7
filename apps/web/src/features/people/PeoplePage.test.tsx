import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answer, fail, pending, requestsTo, server, settled } from '../../test/api';
import { ada, admin, grace, GRACE_ID, invitation, INVITATION_ID, viewer } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import PeoplePage from './PeoplePage';

const open = () => renderPage(<PeoplePage />, { route: '/settings/people' });
const confirmWith = (answerYes: boolean) => vi.spyOn(window, 'confirm').mockReturnValue(answerYes);
const rowOf = async (name: string) =>
  within(await screen.findByRole('table', { name: 'People' }))
    .getByText(name)
    .closest('tr')!;

afterEach(() => vi.restoreAllMocks());

describe('the people page', () => {
  it('shows that the people are loading', async () => {
    server.use(answer('me', admin), pending('users'), answer('invitations', []));
    open();
    expect(await screen.findByText('Loading the people…')).toBeTruthy();
  });

  it('says why the people could not load, with a retry', async () => {
    server.use(answer('me', admin), answer('invitations', []), fail('users', 503, 'the database is unavailable'));
    open();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(/The server could not answer \(503\)/)).toBeTruthy();
    expect(within(alert).getByRole('button', { name: 'Retry' })).toBeTruthy();
  });

  it('lists the people for everyone, read-only for a non-admin', async () => {
    server.use(answer('me', viewer), answer('users', [ada, grace]));
    open();
    const table = await screen.findByRole('table', { name: 'People' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0]!.textContent)).toEqual(['Ada Lovelace', 'Grace Hopper']);
    expect(within(rows[1]!).getByText('never')).toBeTruthy();
    await settled();
    expect(screen.queryByRole('button', { name: /Invite|Remove|End sessions/ })).toBeNull();
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(screen.getByText('Admins of Acme invite people and change their roles.')).toBeTruthy();
    // The pending invitations are the admins' to see.
    expect(requestsTo('invitations')).toHaveLength(0);
  });

  it('marks the admin themself, and changes a role', async () => {
    server.use(
      answer('me', admin),
      answer('users', () => (requestsTo('updateUser').length ? [ada, { ...grace, role: 'viewer' }] : [ada, grace])),
      answer('invitations', []),
      answer('updateUser', { ...grace, role: 'viewer' }),
    );
    open();
    const row = await rowOf('Ada Lovelace');
    expect(within(row).getByText('you')).toBeTruthy();
    await userEvent.click(screen.getByRole('combobox', { name: 'Role of Grace Hopper' }));
    await userEvent.click(await screen.findByRole('option', { name: 'viewer' }));
    await waitFor(() =>
      expect(requestsTo('updateUser')[0]).toMatchObject({ path: `/users/${GRACE_ID}`, body: { role: 'viewer' } }),
    );
    await waitFor(() =>
      expect((screen.getByRole('combobox', { name: 'Role of Grace Hopper' }) as HTMLInputElement).value).toBe('viewer'),
    );
  });

  it("says why a role was not changed (the last admin's)", async () => {
    server.use(
      answer('me', admin),
      answer('users', [ada, grace]),
      answer('invitations', []),
      fail('updateUser', 409, "the organization's last admin cannot be demoted"),
    );
    open();
    await userEvent.click(await screen.findByRole('combobox', { name: 'Role of Ada Lovelace' }));
    await userEvent.click(await screen.findByRole('option', { name: 'member' }));
    expect(await screen.findByText("the organization's last admin cannot be demoted")).toBeTruthy();
  });

  it('removes someone once the admin confirms what it does', async () => {
    const confirm = confirmWith(true);
    server.use(
      answer('me', admin),
      answer('users', () => (requestsTo('removeUser').length ? [ada] : [ada, grace])),
      answer('invitations', []),
      answer('removeUser', { deleted: true }),
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'Remove Grace Hopper' }));
    expect(confirm.mock.calls[0]![0]).toMatch(
      /^Remove Grace Hopper \(grace@example.com\) from Acme\? Their sessions in Acme end at once, and the API keys they made in it are revoked\./,
    );
    await waitFor(() => expect(screen.queryByText('Grace Hopper')).toBeNull());
    expect(requestsTo('removeUser')[0]!.path).toBe(`/users/${GRACE_ID}`);
  });

  it('asks before ending sessions, and does nothing when told not to', async () => {
    confirmWith(false);
    server.use(answer('me', admin), answer('users', [ada, grace]), answer('invitations', []));
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'End sessions of Grace Hopper' }));
    await settled();
    expect(requestsTo('endSessions')).toHaveLength(0);
  });

  it("ends someone's sessions", async () => {
    confirmWith(true);
    server.use(
      answer('me', admin),
      answer('users', [ada, grace]),
      answer('invitations', []),
      answer('endSessions', { id: GRACE_ID, sessions_ended: 2 }),
    );
    open();
    await userEvent.click(await screen.findByRole('button', { name: 'End sessions of Grace Hopper' }));
    await waitFor(() => expect(requestsTo('endSessions')[0]!.path).toBe(`/users/${GRACE_ID}/sessions`));
  });

  describe('invitations', () => {
    it('says there is none pending', async () => {
      server.use(answer('me', admin), answer('users', [ada]), answer('invitations', []));
      open();
      expect(await screen.findByText(/^No pending invitation\./)).toBeTruthy();
    });

    it('invites by email and role, and shows the link to copy, saying it was not mailed', async () => {
      const link = 'http://console.example/accept-invitation?token=abc123';
      server.use(
        answer('me', admin),
        answer('users', [ada]),
        answer('invitations', () => (requestsTo('invite').length ? [invitation()] : [])),
        answer('invite', {
          id: INVITATION_ID,
          email: 'alan@example.com',
          role: 'viewer',
          created_at: '2026-03-02T09:00:00.000Z',
          expires_at: '2026-03-09T09:00:00.000Z',
          link,
          mailed: false,
        }),
      );
      open();
      await userEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
      const dialog = await screen.findByRole('dialog', { name: 'Invite someone' });
      await userEvent.type(within(dialog).getByRole('textbox', { name: /^Email/ }), 'alan@example.com');
      await userEvent.click(within(dialog).getByRole('combobox', { name: 'Role' }));
      await userEvent.click(await screen.findByRole('option', { name: 'viewer' }));
      await userEvent.click(within(dialog).getByRole('button', { name: 'Invite' }));
      const shown = await screen.findByRole('dialog', { name: 'Invitation for alan@example.com' });
      expect(within(shown).getByTestId('invitation-link').textContent).toBe(link);
      expect(within(shown).getByText(/^Not mailed: this server sends no email/)).toBeTruthy();
      expect(within(shown).getByRole('button', { name: 'Copy the link' })).toBeTruthy();
      expect(requestsTo('invite')[0]).toMatchObject({ body: { email: 'alan@example.com', role: 'viewer' }, csrf: '1' });
      // The new invitation is listed, without its link.
      const pendingTable = await screen.findByRole('table', { name: 'Pending invitations' });
      expect(within(pendingTable).getByText('alan@example.com')).toBeTruthy();
      expect(within(pendingTable).getByText('Ada Lovelace')).toBeTruthy();
    });

    it('says when the invitation was mailed', async () => {
      server.use(
        answer('me', admin),
        answer('users', [ada]),
        answer('invitations', []),
        answer('invite', {
          id: INVITATION_ID,
          email: 'alan@example.com',
          role: 'member',
          created_at: '2026-03-02T09:00:00.000Z',
          expires_at: '2026-03-09T09:00:00.000Z',
          link: 'http://console.example/accept-invitation?token=abc123',
          mailed: true,
        }),
      );
      open();
      await userEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
      const dialog = await screen.findByRole('dialog', { name: 'Invite someone' });
      await userEvent.type(within(dialog).getByRole('textbox', { name: /^Email/ }), 'alan@example.com');
      await userEvent.click(within(dialog).getByRole('button', { name: 'Invite' }));
      expect(await screen.findByText(/^Mailed to alan@example.com\./)).toBeTruthy();
    });

    it('says why an invitation was refused', async () => {
      server.use(
        answer('me', admin),
        answer('users', [ada, grace]),
        answer('invitations', []),
        fail('invite', 409, 'grace@example.com is a member of this organization already'),
      );
      open();
      await userEvent.click(await screen.findByRole('button', { name: 'Invite someone' }));
      const dialog = await screen.findByRole('dialog', { name: 'Invite someone' });
      await userEvent.type(within(dialog).getByRole('textbox', { name: /^Email/ }), 'grace@example.com');
      await userEvent.click(within(dialog).getByRole('button', { name: 'Invite' }));
      expect((await within(dialog).findByRole('alert')).textContent).toBe(
        'grace@example.com is a member of this organization already',
      );
    });

    it('revokes a pending invitation', async () => {
      confirmWith(true);
      server.use(
        answer('me', admin),
        answer('users', [ada]),
        answer('invitations', () => (requestsTo('revokeInvitation').length ? [] : [invitation()])),
        answer('revokeInvitation', { deleted: true }),
      );
      open();
      await userEvent.click(await screen.findByRole('button', { name: 'Revoke the invitation of alan@example.com' }));
      expect(await screen.findByText(/^No pending invitation\./)).toBeTruthy();
      expect(requestsTo('revokeInvitation')[0]!.path).toBe(`/invitations/${INVITATION_ID}`);
    });
  });
});
