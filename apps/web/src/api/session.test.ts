import { http, HttpResponse } from 'msw';
import { beforeEach, describe, expect, it } from 'vitest';
import { server } from '../test/api';
import { api } from './client';
import { session } from './session';

const refuse = () =>
  server.use(
    http.get('/api/svc/v1/projects', () =>
      HttpResponse.json({ detail: 'your session has ended: sign in again' }, { status: 401 }),
    ),
  );

describe('the session', () => {
  beforeEach(() => session.signOut());

  it("ends with the server's reason when a call is refused while signed in", async () => {
    refuse();
    session.signedIn();
    await expect(api('/projects')).rejects.toThrow('your session has ended');
    expect(session.get()).toEqual({
      status: 'signed-out',
      message: 'You were signed out: your session has ended: sign in again.',
    });
  });

  it('goes to the sign-in page without a message when there never was a session', async () => {
    refuse();
    await expect(api('/projects')).rejects.toThrow();
    expect(session.get()).toEqual({ status: 'signed-out', message: null });
  });

  it("leaves a sign-in form's 401 to the form", async () => {
    refuse();
    session.signedIn();
    await expect(api('/projects', { signingIn: true })).rejects.toThrow();
    expect(session.get().status).toBe('signed-in');
  });
});
