import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { answer, fail, pending, requests, requestsTo, server } from '../../test/api';
import { admin } from '../../test/fixtures';
import { renderPage } from '../../test/render';
import SignInPage from './SignInPage';

const open = () => renderPage(<SignInPage />, { route: '/sign-in?next=/datasets', signedIn: false });

async function signIn(key: string) {
  await userEvent.type(screen.getByLabelText('API key'), key);
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('the sign-in page', () => {
  it('asks for a key before calling the server', async () => {
    open();
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Paste an API key first.')).toBeTruthy();
    expect(requests).toHaveLength(0);
  });

  it('refuses a key the server does not know, and stays', async () => {
    server.use(fail('me', 401, 'unknown API key'));
    open();
    await signIn('sl_wrong');
    expect(await screen.findByText(/This API key is not valid on this server/)).toBeTruthy();
    expect(requestsTo('me')[0]!.key).toBe('sl_wrong');
    expect(screen.queryByText(/^Now at/)).toBeNull();
  });

  it('shows a server failure as such', async () => {
    server.use(fail('me', 503, 'the database is unavailable'));
    open();
    await signIn('sl_right');
    expect(await screen.findByText(/The server could not answer \(503\): the database is unavailable/)).toBeTruthy();
  });

  it('waits for the check with the button busy', async () => {
    server.use(pending('me'));
    open();
    await signIn('sl_right');
    expect(screen.getByRole('button', { name: 'Sign in' }).hasAttribute('disabled')).toBe(true);
  });

  it('signs in with a valid key and goes where the user was heading', async () => {
    server.use(answer('me', admin));
    open();
    await signIn('  sl_right  ');
    expect(await screen.findByText('Now at /datasets')).toBeTruthy();
    // The key is trimmed before it is tried.
    expect(requestsTo('me')[0]!.key).toBe('sl_right');
  });
});
