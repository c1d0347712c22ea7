import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { buildStack, call } from '../support/app';
import { useStack } from '../support/fixtures';
import { callAs, CONSOLE_HEADERS, newPerson, signIn } from '../support/people';

// Admins invite people by email and role; the link's token is shown once (and mailed through SMTP_URL),
// stored as its hash, valid 7 days, used once; accepting it creates the account or joins an existing one.
const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ worker: false, orgs: ['invites', 'invites-other'] });

const INVALID = { detail: 'this invitation is not valid: it was used, revoked or has expired' };
const email = (label: string) => `${label}-${randomBytes(4).toString('hex')}@example.com`;
const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

async function invite(cookie: string, body: { email: string; role: string }, app = stack.app) {
  const res = await callAs(app, cookie, 'POST', '/invitations', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; email: string; role: string; link: string; mailed: boolean; expires_at: string };
}
const preview = (token: string) =>
  stack.app.inject({ method: 'GET', url: `/api/svc/v1/auth/invitation?token=${encodeURIComponent(token)}` });
const accept = (body: object, headers: Record<string, string> = CONSOLE_HEADERS) =>
  stack.app.inject({ method: 'POST', url: '/api/svc/v1/auth/accept-invitation', headers, payload: body });
const anAdmin = async (orgId = org.id) => {
  const person = await newPerson(sql, orgId, 'admin');
  return { person, cookie: await signIn(stack.app, person) };
};

describe('inviting', () => {
  it('answers a one-time link once, keeps only its hash, and lists the invitation without it', async () => {
    const { person, cookie } = await anAdmin();
    const to = email('new');
    const made = await invite(cookie, { email: to, role: 'member' });
    expect(made).toMatchObject({ email: to, role: 'member', mailed: false });
    expect(made.link).toMatch(/^http:\/\/localhost:80\/accept-invitation\?token=[\w-]{43}$/);
    const days = (Date.parse(made.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const [row] = await sql`select token_hash from invitations where id = ${made.id}`;
    expect(row.token_hash).toEqual(createHash('sha256').update(tokenOf(made.link)).digest());

    const listed = (await callAs(stack.app, cookie, 'GET', '/invitations')).json();
    const mine = listed.find((i: { id: string }) => i.id === made.id);
    expect(mine).toEqual({
      id: made.id,
      email: to,
      role: 'member',
      invited_by: { id: person.id, email: person.email, name: person.name },
      created_at: expect.any(String),
      expires_at: made.expires_at,
    });
    expect(JSON.stringify(listed)).not.toContain(tokenOf(made.link));
  });

  it('refuses to invite a member of the organization (409), and an email twice keeps only the newest link', async () => {
    const { cookie } = await anAdmin();
    const member = await newPerson(sql, org.id, 'viewer');
    const twice = await callAs(stack.app, cookie, 'POST', '/invitations', {
      email: member.email.toUpperCase(),
      role: 'admin',
    });
    expect([twice.statusCode, twice.json().detail]).toEqual([409, expect.stringMatching(/already a member/)]);

    const to = email('again');
    const first = await invite(cookie, { email: to, role: 'viewer' });
    const second = await invite(cookie, { email: to, role: 'member' });
    expect((await preview(tokenOf(first.link))).json()).toEqual(INVALID);
    expect((await preview(tokenOf(second.link))).json()).toMatchObject({ role: 'member' });
  });

  it('is for admins: members and viewers are refused', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const cookie = await signIn(stack.app, await newPerson(sql, org.id, role));
      const res = await callAs(stack.app, cookie, 'POST', '/invitations', { email: email('x'), role: 'viewer' });
      expect([res.statusCode, res.json().detail]).toEqual([403, expect.stringMatching(`your role \\(${role}\\)`)]);
      expect((await callAs(stack.app, cookie, 'GET', '/invitations')).statusCode).toBe(403);
    }
  });
});

describe('accepting', () => {
  it('creates the account with the role, signs the person in, and works once', async () => {
    const { cookie } = await anAdmin();
    const to = email('newcomer');
    const { link } = await invite(cookie, { email: to, role: 'member' });
    const token = tokenOf(link);
    const seen = await preview(token);
    expect([seen.statusCode, seen.json()]).toEqual([
      200,
      {
        email: to,
        role: 'member',
        organization_name: expect.stringMatching(/^invites-/),
        existing_account: false,
        password: true,
        sso: null,
      },
    ]);

    const noName = await accept({ token, password: 'a long enough password' });
    expect([noName.statusCode, noName.json().detail[0].loc]).toEqual([422, ['body', 'name']]);
    const short = await accept({ token, name: 'Newcomer', password: 'short' });
    expect([short.statusCode, short.json().detail[0].loc]).toEqual([422, ['body', 'password']]);

    const res = await accept({ token, name: 'Newcomer', password: 'a long enough password' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      user: { email: to, name: 'Newcomer' },
      organization_id: org.id,
      role: 'member',
      must_change_password: false,
    });
    const session = `sightline_session=${res.cookies.find((c) => c.name === 'sightline_session')!.value}`;
    expect((await callAs(stack.app, session, 'GET', '/me')).json()).toMatchObject({
      organization_id: org.id,
      role: 'member',
      label: to,
    });
    // The password is theirs from now on.
    expect((await signIn(stack.app, { email: to, password: 'a long enough password' })).length).toBeGreaterThan(20);

    const again = await accept({ token, name: 'Someone else', password: 'another long password' });
    expect([again.statusCode, again.json()]).toEqual([404, INVALID]);
    expect((await preview(token)).json()).toEqual(INVALID);
    expect(
      (await callAs(stack.app, cookie, 'GET', '/invitations')).json().map((i: { email: string }) => i.email),
    ).not.toContain(to);
  });

  it('joins an existing account once its password is checked, keeping its other organizations', async () => {
    const { cookie } = await anAdmin();
    const elsewhere = await newPerson(sql, other.id, 'admin');
    const token = tokenOf((await invite(cookie, { email: elsewhere.email, role: 'viewer' })).link);
    expect((await preview(token)).json()).toMatchObject({ existing_account: true, role: 'viewer' });

    const wrong = await accept({ token, password: 'not their password' });
    expect(wrong.statusCode).toBe(401);
    const res = await accept({ token, password: elsewhere.password });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user: { id: elsewhere.id, name: elsewhere.name }, role: 'viewer' });
    const session = `sightline_session=${res.cookies[0].value}`;
    const me = (await callAs(stack.app, session, 'GET', '/me')).json();
    expect(me.organization_id).toBe(org.id);
    expect(me.organizations.map((o: { id: string; role: string }) => [o.id, o.role]).sort()).toEqual(
      [
        [org.id, 'viewer'],
        [other.id, 'admin'],
      ].sort(),
    );
  });

  it('expires 7 days after it was made, by the database clock', async () => {
    const { cookie } = await anAdmin();
    const made = await invite(cookie, { email: email('late'), role: 'member' });
    const token = tokenOf(made.link);
    const age = (seconds: number) => sql`
      update invitations set created_at = created_at - make_interval(secs => ${seconds}),
        expires_at = expires_at - make_interval(secs => ${seconds})
      where id = ${made.id}`;
    await age(7 * 86_400 - 120);
    expect((await preview(token)).statusCode).toBe(200);
    await age(180);
    expect([(await preview(token)).statusCode, (await preview(token)).json()]).toEqual([404, INVALID]);
    const res = await accept({ token, name: 'Late', password: 'a long enough password' });
    expect([res.statusCode, res.json()]).toEqual([404, INVALID]);
    expect(
      (await callAs(stack.app, cookie, 'GET', '/invitations')).json().map((i: { id: string }) => i.id),
    ).not.toContain(made.id);
  });

  it('a revoked invitation, or a token never given, answers the same 404', async () => {
    const { cookie } = await anAdmin();
    const made = await invite(cookie, { email: email('revoked'), role: 'member' });
    const stranger = await anAdmin(other.id);
    expect((await callAs(stack.app, stranger.cookie, 'DELETE', `/invitations/${made.id}`)).statusCode).toBe(404);
    expect((await preview(tokenOf(made.link))).statusCode).toBe(200);
    const revoked = await callAs(stack.app, cookie, 'DELETE', `/invitations/${made.id}`);
    expect(revoked.json()).toEqual({ id: made.id, deleted: true });
    expect((await callAs(stack.app, cookie, 'DELETE', `/invitations/${made.id}`)).statusCode).toBe(404);
    for (const token of [tokenOf(made.link), randomBytes(32).toString('base64url')]) {
      expect([(await preview(token)).statusCode, (await preview(token)).json()]).toEqual([404, INVALID]);
      const res = await accept({ token, name: 'X', password: 'a long enough password' });
      expect([res.statusCode, res.json()]).toEqual([404, INVALID]);
    }
  });

  it('is refused when another site posts it', async () => {
    const { cookie } = await anAdmin();
    const token = tokenOf((await invite(cookie, { email: email('csrf'), role: 'admin' })).link);
    const res = await accept(
      { token, name: 'Mallory', password: 'a long enough password' },
      { origin: 'https://evil.example' },
    );
    expect([res.statusCode, res.cookies]).toEqual([403, []]);
    expect((await preview(token)).statusCode).toBe(200);
  });

  it('the audit log names the admin who invited and the person who accepted', async () => {
    const { person, cookie } = await anAdmin();
    const to = email('audited');
    const made = await invite(cookie, { email: to, role: 'viewer' });
    const joined = await accept({ token: tokenOf(made.link), name: 'Audited', password: 'a long enough password' });
    const { entries } = (await call(stack.app, org.key, 'GET', '/audit-log?target_kind=invitation&limit=500')).json();
    const about = entries.filter((e: { target: { id: string } }) => e.target.id === made.id);
    expect(about).toEqual([
      expect.objectContaining({
        action: 'accept',
        actor: { key_id: null, user_id: joined.json().user.id, label: to, role: 'viewer' },
      }),
      expect.objectContaining({
        action: 'create',
        actor: { key_id: null, user_id: person.id, label: person.email, role: 'admin' },
        after: expect.objectContaining({ email: to, role: 'viewer' }),
      }),
    ]);
    expect(JSON.stringify(about)).not.toContain(tokenOf(made.link));
  });
});

describe('mailing the link', () => {
  it('mails it through SMTP_URL to the person invited, from SMTP_FROM', async () => {
    const mails: { from: string; to: string[]; body: string }[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        let body = '';
        stream.on('data', (d) => (body += d));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            body,
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    const mailing = await buildStack({
      worker: false,
      env: {
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        SMTP_FROM: 'Sightline <invites@sightline.example.com>',
        PUBLIC_URL: 'https://sightline.example.com',
      },
    });
    try {
      const { cookie } = await anAdmin();
      const to = email('mailed');
      const made = await invite(cookie, { email: to, role: 'member' }, mailing.app);
      expect(made.mailed).toBe(true);
      expect(made.link).toMatch(/^https:\/\/sightline\.example\.com\/accept-invitation\?token=/);
      expect(mails).toHaveLength(1);
      expect(mails[0].to).toEqual([to]);
      expect(mails[0].from).toBe('invites@sightline.example.com');
      // Quoted-printable may fold long lines: the link is read back unfolded.
      const text = mails[0].body.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      expect(text).toContain(made.link);
    } finally {
      await mailing.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('still answers the link when the mail server cannot be reached', async () => {
    const unreachable = await buildStack({ worker: false, env: { SMTP_URL: 'smtp://127.0.0.1:9' } });
    try {
      const { cookie } = await anAdmin();
      const made = await invite(cookie, { email: email('unmailed'), role: 'member' }, unreachable.app);
      expect(made.mailed).toBe(false);
      expect((await preview(tokenOf(made.link))).statusCode).toBe(200);
    } finally {
      await unreachable.close();
    }
  });
});
