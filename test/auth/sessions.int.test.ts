import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashApiKey, migrate } from '@sightline/db';
import { buildStack, call } from '../support/app';
import { useStack } from '../support/fixtures';
import { callAs, CONSOLE_HEADERS, newPerson, signIn } from '../support/people';
import { databaseUrl } from '../support/services';

// People signing in to the console: the session cookie, what it opens for each role, how a session ends
// (sign-out, idle and absolute expiry, a key's revocation), refusals of cross-site writes, and the limits on
// guessing passwords.
const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ worker: false, orgs: ['people', 'people-other'] });

const login = (body: object, remoteAddress = '10.0.0.1') =>
  stack.app.inject({
    method: 'POST',
    url: '/api/svc/v1/auth/login',
    headers: CONSOLE_HEADERS,
    payload: body,
    remoteAddress,
  });
const keySignIn = (apiKey: string, remoteAddress?: string) =>
  stack.app.inject({
    method: 'POST',
    url: '/api/svc/v1/auth/key',
    headers: CONSOLE_HEADERS,
    payload: { api_key: apiKey },
    remoteAddress,
  });
/** Moves the session's clock: its sign-in and last use `hours` earlier, as if that long had passed. */
const age = (cookie: string, hours: number) => sql`
  update user_sessions set created_at = created_at - make_interval(secs => ${hours * 3600}),
    last_seen_at = last_seen_at - make_interval(secs => ${hours * 3600}),
    expires_at = expires_at - make_interval(secs => ${hours * 3600})
  where id_hash = ${hashApiKey(cookie.split('=')[1])}`;

describe('signing in with an email and password', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie, and /me answers the person, organization and role', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    const res = await login({ email: ada.email.toUpperCase(), password: ada.password });
    expect(res.statusCode, res.body).toBe(200);
    const [cookie] = res.cookies;
    expect(cookie).toMatchObject({ name: 'sightline_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie.secure).toBeFalsy();
    expect(cookie.value).toMatch(/^[\w-]{43}$/);
    // Only its hash is stored.
    const stored = await sql`select 1 from user_sessions where id_hash = ${hashApiKey(cookie.value)}`;
    expect(stored).toHaveLength(1);

    const me = await callAs(stack.app, `sightline_session=${cookie.value}`, 'GET', '/me');
    expect(me.json()).toMatchObject({
      organization_id: org.id,
      role: 'member',
      label: ada.email,
      key_id: null,
      remark_author: ada.email,
      user: { id: ada.id, email: ada.email, name: ada.name },
      must_change_password: false,
    });
    expect(me.json().organizations).toEqual([expect.objectContaining({ id: org.id, role: 'member' })]);
  });

  it('marks the cookie Secure when the console is served over HTTPS', async () => {
    const https = await buildStack({ worker: false, env: { PUBLIC_URL: 'https://sightline.example.com' } });
    try {
      const ada = await newPerson(sql, org.id, 'viewer');
      const res = await https.app.inject({
        method: 'POST',
        url: '/api/svc/v1/auth/login',
        headers: { ...CONSOLE_HEADERS, origin: 'https://sightline.example.com' },
        payload: { email: ada.email, password: ada.password },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.cookies[0].secure).toBe(true);
    } finally {
      await https.close();
    }
  });

  it('answers an unknown email exactly as a wrong password', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    const wrong = await login({ email: ada.email, password: 'not-the-password' }, '10.0.1.1');
    const unknown = await login(
      { email: `nobody-${randomBytes(3).toString('hex')}@example.com`, password: 'x' },
      '10.0.1.2',
    );
    expect([wrong.statusCode, wrong.json()]).toEqual([401, { detail: 'wrong email or password' }]);
    expect([unknown.statusCode, unknown.json()]).toEqual([wrong.statusCode, wrong.json()]);
    expect(wrong.cookies).toEqual([]);
  });

  it('locks an email after 10 failures in a row, known or not, even for the right password', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    const ghost = `ghost-${randomBytes(3).toString('hex')}@example.com`;
    for (let i = 0; i < 10; i++) {
      // From many addresses: the lock is the email's, whoever guesses.
      expect((await login({ email: ada.email, password: `guess-${i}` }, `10.1.0.${i}`)).statusCode).toBe(401);
      expect((await login({ email: ghost, password: `guess-${i}` }, `10.1.1.${i}`)).statusCode).toBe(401);
    }
    const locked = await login({ email: ada.email, password: ada.password }, '10.1.2.1');
    const ghostLocked = await login({ email: ghost, password: 'guess' }, '10.1.2.2');
    expect(locked.statusCode).toBe(429);
    expect(locked.json().detail).toMatch(/^too many failed sign-ins for this email; try again in \d+ min$/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect([ghostLocked.statusCode, ghostLocked.json()]).toEqual([429, locked.json()]);
    // Another person is not held up.
    const bob = await newPerson(sql, org.id, 'member');
    expect((await login({ email: bob.email, password: bob.password }, '10.1.2.3')).statusCode).toBe(200);
  });

  it('a success clears the failures counted so far', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    for (let i = 0; i < 9; i++) await login({ email: ada.email, password: 'wrong' }, '10.2.0.1');
    expect((await login({ email: ada.email, password: ada.password }, '10.2.0.1')).statusCode).toBe(200);
    for (let i = 0; i < 9; i++) await login({ email: ada.email, password: 'wrong' }, '10.2.0.2');
    expect((await login({ email: ada.email, password: ada.password }, '10.2.0.2')).statusCode).toBe(200);
  });

  it('limits the attempts of one address, whatever emails it tries', async () => {
    const statuses = [];
    for (let i = 0; i < 31; i++)
      statuses.push((await login({ email: `spray-${i}@example.com`, password: 'password1' }, '10.3.0.1')).statusCode);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    const ada = await newPerson(sql, org.id, 'member');
    expect((await login({ email: ada.email, password: ada.password }, '10.3.0.1')).statusCode).toBe(429);
    expect((await login({ email: ada.email, password: ada.password }, '10.3.0.2')).statusCode).toBe(200);
  });

  it("redoes a hash made with weaker parameters at the person's next sign-in", async () => {
    const ada = await newPerson(sql, org.id, 'member');
    const salt = randomBytes(16);
    const weak = scryptSync(ada.password, salt, 32, { N: 2 ** 12, r: 8, p: 1 });
    const stored = `scrypt$12$8$1$${salt.toString('base64')}$${weak.toString('base64')}`;
    await sql`update users set password_hash = ${stored} where id = ${ada.id}`;
    expect((await login({ email: ada.email, password: ada.password }, '10.4.1.1')).statusCode).toBe(200);
    const [{ password_hash }] = await sql`select password_hash from users where id = ${ada.id}`;
    expect(password_hash).toMatch(/^scrypt\$15\$8\$1\$/);
    expect((await login({ email: ada.email, password: ada.password }, '10.4.1.1')).statusCode).toBe(200);
  });

  it('refuses a person of no organization', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    await sql`delete from memberships where user_id = ${ada.id}`;
    const res = await login({ email: ada.email, password: ada.password }, '10.4.0.1');
    expect([res.statusCode, res.json().detail]).toEqual([403, expect.stringMatching(/no organization/)]);
  });
});

describe('what a session opens', () => {
  it("gives a viewer's session reads, and refuses its writes", async () => {
    const viewer = await signIn(stack.app, await newPerson(sql, org.id, 'viewer'));
    expect((await callAs(stack.app, viewer, 'GET', '/projects')).statusCode).toBe(200);
    const write = await callAs(stack.app, viewer, 'POST', '/project', { name: 'nope' });
    expect([write.statusCode, write.json().detail]).toEqual([
      403,
      expect.stringMatching(/^your role \(viewer\) cannot write/),
    ]);
  });

  it("takes the role from the person's membership at each request", async () => {
    const ada = await newPerson(sql, org.id, 'viewer');
    const cookie = await signIn(stack.app, ada);
    expect((await callAs(stack.app, cookie, 'POST', '/project', { name: `p-${ada.id.slice(0, 6)}` })).statusCode).toBe(
      403,
    );
    await sql`update memberships set role = 'member' where user_id = ${ada.id}`;
    expect((await callAs(stack.app, cookie, 'POST', '/project', { name: `p-${ada.id.slice(0, 6)}` })).statusCode).toBe(
      200,
    );
    await sql`delete from memberships where user_id = ${ada.id}`;
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(401);
  });

  it('switches between the organizations the person belongs to, and to no other', async () => {
    const ada = await newPerson(sql, org.id, 'admin');
    await sql`insert into memberships (organization_id, user_id, role) values (${other.id}, ${ada.id}, 'viewer')`;
    const cookie = await signIn(stack.app, ada);
    const me = (await callAs(stack.app, cookie, 'GET', '/me')).json();
    expect(me.organizations.map((o: { id: string }) => o.id).sort()).toEqual([org.id, other.id].sort());
    const moved = await callAs(stack.app, cookie, 'POST', '/auth/organization', { organization_id: other.id });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).json()).toMatchObject({
      organization_id: other.id,
      role: 'viewer',
    });
    const stranger = await newPerson(sql, other.id, 'admin');
    const refused = await callAs(stack.app, await signIn(stack.app, stranger), 'POST', '/auth/organization', {
      organization_id: org.id,
    });
    expect(refused.statusCode).toBe(403);
  });
});

describe('cross-site requests', () => {
  it("refuses a write made with the cookie but without the console's header: a cross-site form post", async () => {
    const cookie = await signIn(stack.app, await newPerson(sql, org.id, 'admin'));
    const form = await stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/project',
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=pwned',
    });
    expect([form.statusCode, form.json().detail]).toEqual([403, expect.stringMatching(/^cross-site request refused/)]);
    // With the header but from another origin (a script there cannot set it without CORS; checked anyway).
    const foreign = await callAs(
      stack.app,
      cookie,
      'POST',
      '/project',
      { name: 'pwned' },
      {
        ...CONSOLE_HEADERS,
        origin: 'https://evil.example',
      },
    );
    expect(foreign.statusCode).toBe(403);
    const [{ n }] = await sql`select count(*)::int as n from projects where name = 'pwned'`;
    expect(n).toBe(0);
    // From the console itself.
    const own = await callAs(
      stack.app,
      cookie,
      'POST',
      '/project',
      { name: `own-${randomBytes(3).toString('hex')}` },
      {
        ...CONSOLE_HEADERS,
        origin: 'http://localhost:80',
      },
    );
    expect(own.statusCode, own.body).toBe(200);
  });

  it('refuses a sign-in posted by another site', async () => {
    const ada = await newPerson(sql, org.id, 'member');
    const res = await stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/auth/login',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      payload: `email=${encodeURIComponent(ada.email)}&password=${ada.password}`,
    });
    expect(res.statusCode).toBe(403);
    expect(res.cookies).toEqual([]);
  });
});

describe('how a session ends', () => {
  it('ends at sign-out, on every API process', async () => {
    const second = await buildStack({ worker: false });
    try {
      const cookie = await signIn(stack.app, await newPerson(sql, org.id, 'member'));
      expect((await callAs(second.app, cookie, 'GET', '/me')).statusCode).toBe(200);
      const out = await callAs(stack.app, cookie, 'POST', '/auth/logout');
      expect(out.statusCode).toBe(200);
      expect(out.cookies[0]).toMatchObject({ name: 'sightline_session', value: '' });
      expect((await callAs(second.app, cookie, 'GET', '/me')).statusCode).toBe(401);
      expect((await callAs(stack.app, cookie, 'GET', '/me')).json()).toEqual({
        detail: 'your session has ended: sign in again',
      });
    } finally {
      await second.close();
    }
  });

  it('ends after SESSION_IDLE_HOURS without a request, and is kept alive by requests', async () => {
    const cookie = await signIn(stack.app, await newPerson(sql, org.id, 'member'));
    await age(cookie, 23);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(200);
    // That request moved its last use to now: another 23 hours still leave it open.
    await age(cookie, 23);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(200);
    await age(cookie, 24.1);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(401);
  });

  it('ends SESSION_MAX_DAYS after the sign-in, however busy', async () => {
    const cookie = await signIn(stack.app, await newPerson(sql, org.id, 'member'));
    for (let day = 0; day < 13; day++) {
      await age(cookie, 24);
      await sql`update user_sessions set last_seen_at = now() where id_hash = ${hashApiKey(cookie.split('=')[1])}`;
    }
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(200);
    await age(cookie, 23);
    await sql`update user_sessions set last_seen_at = now() where id_hash = ${hashApiKey(cookie.split('=')[1])}`;
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(200);
    await age(cookie, 1.1);
    await sql`update user_sessions set last_seen_at = now() where id_hash = ${hashApiKey(cookie.split('=')[1])}`;
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(401);
  });
});

describe('a session opened with an API key', () => {
  it("has the key's role, keeps no key in the cookie, and ends when the key is revoked", async () => {
    const made = await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'kiosk' });
    const { id, key } = made.json();
    const res = await keySignIn(key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ user: null, organization_id: org.id, role: 'viewer' });
    const cookie = `sightline_session=${res.cookies[0].value}`;
    expect(cookie).not.toContain(key.slice(3));
    expect((await callAs(stack.app, cookie, 'GET', '/me')).json()).toMatchObject({
      key_id: id,
      label: 'kiosk',
      user: null,
    });
    expect((await call(stack.app, org.key, 'DELETE', `/api-keys/${id}`)).statusCode).toBe(200);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).statusCode).toBe(401);
  });

  it('refuses an unknown key', async () => {
    const res = await keySignIn('sl_not-a-key-at-all', '10.4.0.1');
    expect([res.statusCode, res.cookies]).toEqual([401, []]);
  });

  it('refuses an address that sent 10 wrong keys, even with a right one, and no other address', async () => {
    const { key } = (await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'kiosk' })).json();
    for (let i = 0; i < 10; i++) expect((await keySignIn(`sl_guess-${i}`, '10.4.1.1')).statusCode).toBe(401);
    const refused = await keySignIn(key, '10.4.1.1');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().detail).toMatch(/^too many wrong API keys from this address; try again in \d+ min$/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await keySignIn(key, '10.4.1.2')).statusCode).toBe(200);
  });

  it('does not count right keys: a program may open many sessions', async () => {
    const { key } = (await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'kiosk' })).json();
    for (let i = 0; i < 40; i++) expect((await keySignIn(key, '10.4.2.1')).statusCode).toBe(200);
  });
});

describe('a one-time password', () => {
  it('must be replaced before anything else', async () => {
    const ada = await newPerson(sql, org.id, 'admin', { mustChangePassword: true });
    const cookie = await signIn(stack.app, ada);
    expect((await callAs(stack.app, cookie, 'GET', '/me')).json().must_change_password).toBe(true);
    const blocked = await callAs(stack.app, cookie, 'GET', '/projects');
    expect([blocked.statusCode, blocked.json().detail]).toEqual([403, expect.stringMatching(/one-time password/)]);
    const short = await callAs(stack.app, cookie, 'POST', '/auth/password', {
      current_password: ada.password,
      new_password: 'short',
    });
    expect(short.statusCode).toBe(422);
    const wrong = await callAs(stack.app, cookie, 'POST', '/auth/password', {
      current_password: 'nope',
      new_password: 'a much longer password',
    });
    expect(wrong.statusCode).toBe(403);
    const changed = await callAs(stack.app, cookie, 'POST', '/auth/password', {
      current_password: ada.password,
      new_password: 'a much longer password',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await callAs(stack.app, cookie, 'GET', '/projects')).statusCode).toBe(200);
    expect((await login({ email: ada.email, password: ada.password }, '10.5.0.1')).statusCode).toBe(401);
    expect((await login({ email: ada.email, password: 'a much longer password' }, '10.5.0.1')).statusCode).toBe(200);
  });
});

describe('the first admin of a new server', () => {
  it('is offered while no person exists, to BOOTSTRAP_ADMIN_EMAIL alone, once', async () => {
    // A server of its own: its database has no person yet.
    const url = new URL(databaseUrl());
    url.pathname += `_boot_${randomBytes(3).toString('hex')}`;
    await migrate(url.toString());
    const fresh = await buildStack({
      worker: false,
      env: { DATABASE_URL: url.toString(), BOOTSTRAP_ADMIN_EMAIL: 'first@example.com' },
    });
    try {
      const options = () => fresh.app.inject({ method: 'GET', url: '/api/svc/v1/auth/options' }).then((r) => r.json());
      expect(await options()).toEqual({ password: true, sso: null, bootstrap: true });
      const make = (email: string) =>
        fresh.app.inject({
          method: 'POST',
          url: '/api/svc/v1/auth/bootstrap',
          headers: CONSOLE_HEADERS,
          payload: { email, name: 'First', password: 'correct horse battery' },
        });
      expect((await make('someone@example.com')).statusCode).toBe(403);
      const made = await make('First@example.com');
      expect(made.statusCode, made.body).toBe(200);
      expect(made.json()).toMatchObject({ role: 'admin', user: { email: 'First@example.com' } });
      expect(await options()).toMatchObject({ bootstrap: false });
      expect((await make('first@example.com')).statusCode).toBe(403);
    } finally {
      await fresh.close();
      await sql.unsafe(`drop database if exists "${url.pathname.slice(1)}" with (force)`);
    }
  });
});
