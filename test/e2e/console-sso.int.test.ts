import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useConsole } from '../support/console-browser';
import { callbackUrl, OIDC_CLIENT, OidcProvider } from '../support/oidc-provider';

// Single sign-on in the console, in Chromium against the processes `npm start` runs and a real OpenID
// provider (oidc-provider) on 127.0.0.1: a person of an allowed domain signs in with the provider's button,
// lands in the console with the default role, and signs out; a person of another domain is told why not.
const tag = randomUUID().slice(0, 6);
const ORGANIZATION = `sso-e2e-${tag}`;
const PROVIDER = 'Acme ID';
const op = new OidcProvider();
beforeAll(() => op.start());
afterAll(() => op.stop());
const session = useConsole('sso-e2e', {
  env: () => ({
    OIDC_ISSUER: op.issuer,
    OIDC_CLIENT_ID: OIDC_CLIENT.id,
    OIDC_CLIENT_SECRET: OIDC_CLIENT.secret,
    OIDC_ORGANIZATION: ORGANIZATION,
    OIDC_NAME: PROVIDER,
    OIDC_ALLOWED_DOMAINS: 'acme.test',
    OIDC_DEFAULT_ROLE: 'member',
  }),
});
let page: Page;
beforeAll(() => {
  op.register([callbackUrl(session.origin)]);
  page = session.page;
});

/** From the console's sign-in page through the provider's login and consent pages, as `email`. */
async function signInWithProvider(email: string, shots?: string) {
  await page.goto(`${session.origin}/sign-in`);
  await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).click();
  await page.waitForURL(`${op.issuer}/**`);
  await page.locator('input[name="login"]').fill(email);
  await page.locator('input[name="password"]').fill('any password');
  if (shots) await session.shot(`${shots}-provider-login`);
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click(); // the provider's consent
  await page.waitForURL(`${session.origin}/**`);
}

describe('single sign-on in the console', { timeout: 60_000 }, () => {
  it('signs a person in with the provider, with the default role, and out again', async () => {
    await page.goto(`${session.origin}/sign-in`);
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).waitFor();
    await session.shot('sso-sign-in');

    const ada = `ada-${tag}@acme.test`;
    op.people.set(ada, { name: 'Ada Lovelace' });
    await signInWithProvider(ada, 'sso');
    const account = page.getByRole('button', { name: /^Account:/ });
    await expect.poll(() => account.textContent(), { timeout: 15_000 }).toMatch(/Ada Lovelace/);
    expect(await account.textContent()).toContain(ORGANIZATION);
    expect(await account.textContent()).toContain('member');
    expect(new URL(page.url()).pathname).not.toBe('/sign-in');
    const me = await page.evaluate(() => fetch('/api/svc/v1/me').then((r) => r.json()));
    expect(me).toMatchObject({ role: 'member', organization_name: ORGANIZATION, user: { email: ada } });
    // A new organization's console: its projects page, with none yet.
    await page.getByText('No traces yet: send your first one').waitFor();
    await session.shot('sso-signed-in');

    await account.click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: `Sign in with ${PROVIDER}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect((await page.request.get(`${session.api}/me`)).status()).toBe(401);
    await session.shot('sso-signed-out');
  });

  it('tells a person of a domain not allowed why they are not signed in', async () => {
    await page.context().clearCookies(); // the provider's session too: another person signs in
    await signInWithProvider(`eve-${tag}@elsewhere.test`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(
      'people of elsewhere.test cannot sign in here: ask an admin to invite you',
    );
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await session.shot('sso-refused');
    await session.checkA11y('sso-refused');
  });
});
