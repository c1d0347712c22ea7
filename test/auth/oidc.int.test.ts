import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMembership, createInvitation, createUser, ensureOrganization } from '@sightline/db';
import { ApiEnv, parseEnv } from '@sightline/schemas';
import { buildStack, type TestStack } from '../support/app';
import { CONSOLE_HEADERS, newPerson } from '../support/people';
import { callbackUrl, CookieBrowser, OIDC_CLIENT, OidcProvider, throughProvider } from '../support/oidc-provider';
import { freePort, runScript } from '../support/processes';
import { useServices } from '../support/services';

// Single sign-on against a real OpenID provider (oidc-provider) on 127.0.0.1, driven as a browser would:
// the API's start, the provider's login and consent pages, the provider's answer back to the API. The API
// listens on a real port, since the provider sends the browser there.
const tag = randomBytes(4).toString('hex');
const ORGANIZATION = `sso-${tag}`;
const PROVIDER = 'Acme ID';
const { sql } = useServices();
const op = new OidcProvider();
const apis: TestStack[] = [];
/**
 * The main API (allowed domains, default role member), one with OIDC_ONLY and no allowed domain, and one
 * like the main for the invitations' tests (each API counts the sign-ins this address starts).
 */
let main = '';
let only = '';
let inviting = '';

async function ssoApi(env: Record<string, string>): Promise<string> {
  const stack = await buildStack({
    worker: false,
    env: {
      OIDC_ISSUER: op.issuer,
      OIDC_CLIENT_ID: OIDC_CLIENT.id,
      OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
      OIDC_ORGANIZATION: ORGANIZATION,
      OIDC_NAME: PROVIDER,
      ...env,
    },
  });
  apis.push(stack);
  return stack.app.listen({ port: 0, host: '127.0.0.1' });
}

beforeAll(async () => {
  await op.start();
  main = await ssoApi({ OIDC_ALLOWED_DOMAINS: 'allowed.test, Partner.TEST', OIDC_DEFAULT_ROLE: 'member' });
  only = await ssoApi({ OIDC_ONLY: 'true' });
  inviting = await ssoApi({ OIDC_ALLOWED_DOMAINS: 'allowed.test', OIDC_DEFAULT_ROLE: 'member' });
  op.register([callbackUrl(main), callbackUrl(only), callbackUrl(inviting)]);
});
afterAll(async () => {
  for (const api of apis) await api.close();
  await op.stop();
});

const email = (name: string, domain = 'allowed.test') => `${name}-${tag}@${domain}`;

/** The whole sign-in as `login`, in `browser`: where the API sends the browser at the end. */
async function signIn(
  login: string,
  {
    api = main,
    browser = new CookieBrowser(),
    invitation,
  }: { api?: string; browser?: CookieBrowser; invitation?: string } = {},
) {
  const res = await browser.request(await throughProvider(browser, api, login, { invitation }));
  expect(res.status).toBe(302);
  return { location: res.headers.get('location')!, browser, session: browser.cookie(api, 'sightline_session') };
}

/** The refusal a sign-in page shows, from the address the API sent the browser to. */
const refusal = (location: string) => {
  const url = new URL(location, main);
  expect(url.pathname).toBe('/sign-in');
  return url.searchParams.get('error');
};

async function me(session: string | undefined, api = main): Promise<any> {
  const res = await fetch(`${api}/api/svc/v1/me`, { headers: { cookie: `sightline_session=${session}` } });
  expect(res.status).toBe(200);
  return res.json();
}

describe('single sign-on through an OpenID provider', () => {
  it('sends the browser to the provider with PKCE (S256), a state and a nonce', async () => {
    const browser = new CookieBrowser();
    const res = await browser.request(`${main}/api/svc/v1/auth/oidc/start`);
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect(`${to.origin}${to.pathname}`).toBe(`${op.issuer}/auth`);
    const query = Object.fromEntries(to.searchParams);
    expect(query).toMatchObject({
      client_id: OIDC_CLIENT.id,
      response_type: 'code',
      redirect_uri: callbackUrl(main),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.stringMatching(/^[\w-]{20,}$/),
      nonce: expect.stringMatching(/^[\w-]{20,}$/),
    });
    expect(query.scope.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));
    // The browser keeps only an id, for the callback; state, nonce and verifier stay on the server.
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sightline_oidc='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toContain(query.state);
  });

  it('signs a person of an allowed domain in, with a new account in the organization and its default role', async () => {
    const ada = email('ada');
    op.people.set(ada, { name: 'Ada Lovelace' });
    const { location, browser, session } = await signIn(ada);
    expect(location).toBe('/');
    expect(session).toMatch(/^[\w-]{43}$/);
    expect(browser.cookie(main, 'sightline_oidc')).toBeUndefined();
    expect(await me(session)).toMatchObject({
      role: 'member',
      organization_name: ORGANIZATION,
      user: { email: ada, name: 'Ada Lovelace' },
      must_change_password: false,
    });
    // Made just in time, with no password: the provider is how this person signs in.
    const [user] = await sql`select password_hash from users where lower(email) = ${ada}`;
    expect(user.password_hash).toBeNull();
  });

  it('signs the same person in again to the same account', async () => {
    const bo = email('bo', 'partner.test');
    const first = await signIn(bo);
    const again = await signIn(bo, { browser: first.browser }); // the provider remembers them: no pages
    expect(again.location).toBe('/');
    expect(again.session).not.toBe(first.session);
    expect((await me(again.session)).user.id).toBe((await me(first.session)).user.id);
    const rows = await sql`select 1 from users where lower(email) = ${bo}`;
    expect(rows).toHaveLength(1);
  });

  it('leaves a member their role', async () => {
    const boss = email('boss');
    const user = (await createUser(sql, { email: boss, name: 'The Boss', passwordHash: null }))!;
    await addMembership(sql, await ensureOrganization(sql, ORGANIZATION), user.id, 'admin');
    const { session } = await signIn(boss);
    expect(await me(session)).toMatchObject({ role: 'admin', user: { id: user.id, name: 'The Boss' } });
  });

  it('signs in a person of another domain who has an account, to their own organizations only', async () => {
    const [elsewhere] = await sql`insert into organizations (name) values (${`elsewhere-${tag}`}) returning id`;
    const guest = await newPerson(sql, elsewhere.id, 'viewer');
    const { location, session } = await signIn(guest.email);
    expect(location).toBe('/');
    const answer = await me(session);
    expect(answer).toMatchObject({ organization_id: elsewhere.id, role: 'viewer' });
    expect(answer.organizations).toHaveLength(1);
  });

  it('refuses a person of a domain not allowed, saying why, and makes no account', async () => {
    const eve = email('eve', 'elsewhere.test');
    const { location, session } = await signIn(eve);
    expect(refusal(location)).toBe('people of elsewhere.test cannot sign in here: ask an admin to invite you');
    expect(session).toBeUndefined();
    expect(await sql`select 1 from users where lower(email) = ${eve}`).toHaveLength(0);
  });

  it('refuses an email the provider says it has not verified', async () => {
    const cy = email('cy');
    op.people.set(cy, { email_verified: false });
    const { location, session } = await signIn(cy);
    expect(refusal(location)).toBe(`${cy} is not verified at ${PROVIDER}: verify it there, then sign in again`);
    expect(session).toBeUndefined();
  });

  it('refuses an answer whose state was changed, and the genuine one after it', async () => {
    const browser = new CookieBrowser();
    const answer = new URL(await throughProvider(browser, main, email('dee')));
    const genuine = answer.href;
    answer.searchParams.set('state', 'forged-state-value');
    const forged = await browser.request(answer.href);
    expect(forged.status).toBe(302);
    expect(refusal(forged.headers.get('location')!)).toMatch(
      new RegExp(`^the answer from ${PROVIDER} did not pass the checks \\(.*"state".*\\): sign in again$`),
    );
    expect(browser.cookie(main, 'sightline_session')).toBeUndefined();
    // A sign-in is checked once: the genuine answer, late, finds nothing to match.
    const late = await browser.request(genuine);
    expect(refusal(late.headers.get('location')!)).toBe(
      `this sign-in with ${PROVIDER} expired or was already used: sign in again`,
    );
    expect(browser.cookie(main, 'sightline_session')).toBeUndefined();
  });

  it('refuses an answer replayed from another browser', async () => {
    const answer = await throughProvider(new CookieBrowser(), main, email('fay'));
    const res = await new CookieBrowser().request(answer);
    expect(refusal(res.headers.get('location')!)).toBe(
      `this sign-in with ${PROVIDER} expired or was already used: sign in again`,
    );
  });

  it("passes the provider's refusal on", async () => {
    const browser = new CookieBrowser();
    const res = await browser.request(await throughProvider(browser, main, email('gus'), { abort: true }));
    expect(refusal(res.headers.get('location')!)).toBe(`${PROVIDER} refused the sign-in: End-User aborted interaction`);
  });

  it('with OIDC_ONLY, refuses passwords and offers single sign-on; with no allowed domain, makes no account', async () => {
    const options: unknown = await fetch(`${only}/api/svc/v1/auth/options`).then((r) => r.json());
    expect(options).toMatchObject({ password: false, sso: { name: PROVIDER } });
    const [org] = await sql`select id from organizations where name = ${ORGANIZATION}`;
    const person = await newPerson(sql, org.id, 'member');
    const login = await fetch(`${only}/api/svc/v1/auth/login`, {
      method: 'POST',
      headers: { ...CONSOLE_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ email: person.email, password: person.password }),
    });
    expect(login.status).toBe(403);
    expect(await login.json()).toEqual({ detail: 'password sign-in is off on this server: sign in with SSO' });
    // The same person through the provider: an account exists, so in they come.
    const { session } = await signIn(person.email, { api: only });
    expect(await me(session, only)).toMatchObject({ role: 'member', user: { id: person.id } });
    const { location } = await signIn(email('hal'), { api: only });
    expect(refusal(location)).toBe('people of allowed.test cannot sign in here: ask an admin to invite you');
  });

  it('answers 503 with a plain message while the provider does not answer', async () => {
    const port = await freePort();
    const stack = await buildStack({
      worker: false,
      env: {
        OIDC_ISSUER: `http://127.0.0.1:${port}`,
        OIDC_CLIENT_ID: OIDC_CLIENT.id,
        OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
        OIDC_ORGANIZATION: ORGANIZATION,
        OIDC_NAME: PROVIDER,
      },
    });
    try {
      const res = await stack.app.inject({ url: '/api/svc/v1/auth/oidc/start' });
      expect(res.statusCode).toBe(503);
      expect(res.json().detail).toBe(
        `${PROVIDER} (http://127.0.0.1:${port}) did not answer: single sign-on is unavailable for now, try again in a minute`,
      );
      expect(res.headers['retry-after']).toBe('60');
    } finally {
      await stack.close();
    }
  });

  it('limits the sign-ins one address starts, each of which Redis keeps for minutes', async () => {
    const start = () =>
      apis[0].app.inject({ method: 'GET', url: '/api/svc/v1/auth/oidc/start', remoteAddress: '10.9.0.1' });
    const statuses = [];
    for (let i = 0; i < 31; i++) statuses.push((await start()).statusCode);
    expect(statuses.slice(0, 30).every((s) => s === 302)).toBe(true);
    const refused = await start();
    expect([refused.statusCode, refused.json().detail]).toEqual([
      429,
      expect.stringMatching(/^too many sign-in attempts from this address/),
    ]);
    const other = await apis[0].app.inject({
      method: 'GET',
      url: '/api/svc/v1/auth/oidc/start',
      remoteAddress: '10.9.0.2',
    });
    expect(other.statusCode).toBe(302);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc: any = await fetch(`${main}/openapi.json`).then((r) => r.json());
    for (const route of ['start', 'callback']) {
      const get = doc.paths[`/api/svc/v1/auth/oidc/${route}`].get;
      expect(get).toMatchObject({ tags: ['auth'], summary: expect.stringMatching(/^Single sign-on: /) });
      expect(get.responses['302']).toBeDefined();
    }
    const parameters = doc.paths['/api/svc/v1/auth/oidc/callback'].get.parameters.map((p: { name: string }) => p.name);
    expect(parameters).toEqual(expect.arrayContaining(['code', 'state', 'error', 'error_description']));
  });
});

describe('accepting an invitation through single sign-on', () => {
  /** An organization of its own and an invitation to it, as an admin's POST /invitations makes one. */
  async function invite(to: string, role: 'admin' | 'member' | 'viewer' = 'viewer') {
    const organizationId = await ensureOrganization(sql, `invited-${randomBytes(3).toString('hex')}`);
    const { token } = await createInvitation(sql, { organizationId, email: to, role, invitedBy: null });
    return { organizationId, token };
  }
  const preview = async (api: string, token: string): Promise<any> =>
    (await fetch(`${api}/api/svc/v1/auth/invitation?${new URLSearchParams({ token })}`)).json();
  const acceptWithPassword = (api: string, body: object) =>
    fetch(`${api}/api/svc/v1/auth/accept-invitation`, {
      method: 'POST',
      headers: { ...CONSOLE_HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it("makes the account of an invited person of any domain, with the invitation's role, once", async () => {
    const ivy = email('ivy', 'elsewhere.test');
    op.people.set(ivy, { name: 'Ivy Invited' });
    const { organizationId, token } = await invite(ivy.toUpperCase(), 'member');
    expect(await preview(inviting, token)).toMatchObject({
      existing_account: false,
      password: true,
      sso: { name: PROVIDER },
    });
    const { location, session } = await signIn(ivy, { api: inviting, invitation: token });
    expect(location).toBe('/');
    expect(await me(session, inviting)).toMatchObject({
      organization_id: organizationId,
      role: 'member',
      user: { email: ivy.toUpperCase(), name: 'Ivy Invited' },
    });
    const [user] = await sql`select password_hash from users where lower(email) = ${ivy}`;
    expect(user.password_hash).toBeNull();
    const [audit] = await sql`
      select action, after from audit_log where organization_id = ${organizationId} and target_kind = 'invitation'`;
    expect(audit).toMatchObject({ action: 'accept', after: { new_account: true, role: 'member' } });
    // Used: the link does no more.
    const again = await signIn(ivy, { api: inviting, invitation: token });
    expect(refusal(again.location)).toBe('this invitation is not valid: it was used, revoked or has expired');
  });

  it('lets an account without a password join, which a password cannot', async () => {
    const jo = email('jo');
    const first = await signIn(jo, { api: inviting }); // made just in time, in the SSO organization
    const { organizationId, token } = await invite(jo, 'admin');
    expect(await preview(inviting, token)).toMatchObject({ existing_account: true, password: false });
    const withPassword = await acceptWithPassword(inviting, { token, password: 'any password at all' });
    expect(withPassword.status).toBe(409);
    expect(await withPassword.json()).toEqual({
      detail: `${jo} signs in with ${PROVIDER}, not a password: accept with ${PROVIDER}`,
    });
    const { session } = await signIn(jo, { api: inviting, browser: first.browser, invitation: token });
    const answer = await me(session, inviting);
    expect(answer).toMatchObject({
      organization_id: organizationId,
      role: 'admin',
      user: { id: (await me(first.session, inviting)).user.id },
    });
    expect(answer.organizations).toHaveLength(2);
  });

  it('refuses a sign-in as another email, and leaves the invitation valid', async () => {
    const kim = email('kim', 'elsewhere.test');
    const { token } = await invite(kim);
    const { location, session } = await signIn(email('mallory'), { api: inviting, invitation: token });
    expect(refusal(location)).toBe(
      `this invitation is for ${kim}, and ${PROVIDER} signed you in as ${email('mallory')}: sign in there as ${kim}`,
    );
    expect(session).toBeUndefined();
    expect(await preview(inviting, token)).toMatchObject({ email: kim });
  });

  it('is the only way to accept with OIDC_ONLY', async () => {
    const lu = email('lu', 'elsewhere.test');
    const { organizationId, token } = await invite(lu);
    expect(await preview(only, token)).toMatchObject({
      existing_account: false,
      password: false,
      sso: { name: PROVIDER },
    });
    const withPassword = await acceptWithPassword(only, { token, name: 'Lu', password: 'a long enough password' });
    expect([withPassword.status, await withPassword.json()]).toEqual([
      403,
      { detail: `password sign-in is off on this server: accept the invitation with ${PROVIDER}` },
    ]);
    const { session } = await signIn(lu, { api: only, invitation: token });
    expect(await me(session, only)).toMatchObject({ organization_id: organizationId, role: 'viewer' });
  });
});

describe('the single sign-on set-up', () => {
  it('stops the API at start-up, naming what is missing, when OIDC_ISSUER comes without the rest', async () => {
    const run = await runScript('apps/api/src/server.ts', [], {
      OIDC_ISSUER: 'https://id.example.com',
      OIDC_CLIENT_ID: 'sightline',
      OIDC_CLIENT_SECRET: '',
      OIDC_ORGANIZATION: '',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('OIDC_CLIENT_SECRET: must be set with OIDC_ISSUER (single sign-on)');
    expect(run.stderr).toContain('OIDC_ORGANIZATION: must be set with OIDC_ISSUER (single sign-on)');
    expect(run.stderr).not.toContain('OIDC_CLIENT_ID');
  });

  it('refuses OIDC_ONLY without a provider, which would leave no way in but keys', () => {
    expect(() => parseEnv(ApiEnv, { OIDC_ONLY: 'true' })).toThrow(
      'OIDC_ONLY: needs OIDC_ISSUER: nobody could sign in with a password or SSO',
    );
  });
});
