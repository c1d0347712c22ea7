import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentTrace, writeSpans } from '../support/console-data';
import { useConsole, type ConsolePerson } from '../support/console-browser';

// People in the console, in a real browser against the processes `npm start` runs: a person signs in with
// their password (and the browser keeps no key), the live tail runs on the session cookie, an admin invites
// a colleague who accepts in a browser of their own and lands with the role given, a one-time password is
// replaced before anything else, and a person removed is signed out at once.
const PROJECT = `people-bot-${randomUUID().slice(0, 6)}`;
const session = useConsole('people-e2e');
let page: Page;
let admin: ConsolePerson;
let colleague: { email: string; name: string; password: string };
/** The colleague's own browser: no cookie of the admin's. */
let theirs: BrowserContext;
let theirPage: Page;

beforeAll(async () => {
  page = session.page;
  admin = await session.newPerson('admin', { password: `admin-${randomUUID()}` });
  // The live tail's project, with a first trace.
  await writeSpans(session.api, session.keys.admin, agentTrace(PROJECT, Date.now() - 60_000).spans);
}, 60_000);

afterAll(async () => {
  await theirs?.close();
});

/** Everything the page's own script can read of its storage and cookies. */
const readable = (p: Page) =>
  p.evaluate<string>(
    'JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie })',
  );

describe('people in the console', { timeout: 90_000 }, () => {
  it('signs a person in with their password, keeping no key in the browser', async () => {
    await page.goto(`${session.origin}/projects`);
    await page.waitForURL(/\/sign-in\?next=%2Fprojects$/);
    const email = page.getByRole('textbox', { name: 'Email' });
    await email.waitFor();
    await session.shots('people-sign-in');
    await session.expectIdle('the sign-in page');
    await session.checkA11y('people-sign-in');

    await session.signInAs({ email: admin.email, password: 'not the password at all' });
    await page.getByText(/^Wrong email or password\./).waitFor();
    await session.shot('people-sign-in-wrong');
    await session.signInAs(admin);
    await page.waitForURL(`${session.origin}/projects`);
    await page.getByRole('banner').getByText(admin.name).waitFor();
    await page.getByRole('banner').getByText('admin', { exact: true }).waitFor();

    // The session is an HttpOnly cookie: nothing the page's script can read holds a credential.
    const visible = await readable(page);
    expect(visible).not.toContain('sl_');
    expect(visible).not.toContain('sightline_session');
    expect(visible).not.toContain(admin.password);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'sightline_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    await page.getByRole('button', { name: /^Account:/ }).click();
    const menu = page.getByRole('menu');
    await menu.getByText(admin.email).waitFor();
    await session.shot('people-account-menu');
    await page.keyboard.press('Escape');
  });

  it('runs the live tail on the session cookie, with no key in its URL', async () => {
    const streams: string[] = [];
    page.on('request', (r) => r.url().includes('/traces/live') && streams.push(r.url()));
    await page.getByRole('link', { name: PROJECT }).click();
    await page.getByRole('table', { name: 'Traces' }).waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    await page.mouse.move(5, 5); // not reading: a new row may come in at the top
    const name = `live-${randomUUID().slice(0, 8)}`;
    await writeSpans(session.api, session.keys.admin, agentTrace(PROJECT, Date.now(), name).spans);
    await page.getByRole('link', { name }).waitFor({ timeout: 10_000 });
    expect(streams.length).toBeGreaterThan(0);
    for (const url of streams) expect(new URL(url).searchParams.has('api_key')).toBe(false);
  });

  it('lets an admin invite a colleague, who accepts in their own browser and lands with the role given', async () => {
    await page.getByRole('button', { name: /^Account:/ }).click();
    await page.getByRole('menuitem', { name: 'People' }).click();
    const people = page.getByRole('table', { name: 'People' });
    await people.getByText(admin.email).waitFor();
    await page.getByText(/^No pending invitation\./).waitFor();
    await session.shots('people');
    await session.expectIdle('the people page');
    await session.checkA11y('people');

    colleague = { email: `grace-${randomUUID().slice(0, 8)}@example.com`, name: 'Grace Hopper', password: '' };
    colleague.password = `grace-${randomUUID()}`;
    await page.getByRole('button', { name: 'Invite someone' }).click();
    const dialog = page.getByRole('dialog', { name: 'Invite someone' });
    await dialog.getByRole('textbox', { name: /^Email/ }).fill(colleague.email);
    await dialog.getByRole('combobox', { name: 'Role' }).click();
    await page.getByRole('option', { name: 'member' }).click();
    await dialog.getByRole('button', { name: 'Invite' }).click();
    const shown = page.getByRole('dialog', { name: `Invitation for ${colleague.email}` });
    await shown.getByText(/^Not mailed: this server sends no email/).waitFor();
    const link = (await shown.getByTestId('invitation-link').textContent())!;
    expect(link).toMatch(new RegExp(`^${session.origin}/accept-invitation\\?token=[\\w-]{43}$`));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: session.origin });
    await shown.getByRole('button', { name: 'Copy the link' }).click();
    await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(link);
    await session.shot('people-invitation-link');
    await session.checkA11y('people-invitation-link');
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('table', { name: 'Pending invitations' }).getByText(colleague.email).waitFor();

    theirs = await session.browser.newContext({ viewport: { width: 1440, height: 900 } });
    theirPage = await theirs.newPage();
    await theirPage.goto(link);
    await theirPage.getByRole('heading', { name: `Join ${session.organization}` }).waitFor();
    await theirPage.getByText(colleague.email).waitFor();
    await session.shots('people-accept', theirPage);
    await session.checkA11y('people-accept', theirPage);
    await theirPage.getByRole('textbox', { name: /^Your name/ }).fill(colleague.name);
    await theirPage.getByLabel(/^Password/).fill(colleague.password);
    await theirPage.getByRole('button', { name: 'Create my account' }).click();
    await theirPage.waitForURL(`${session.origin}/projects`);
    await theirPage.getByRole('link', { name: PROJECT }).waitFor();
    await theirPage.getByRole('banner').getByText(colleague.name).waitFor();
    await theirPage.getByRole('banner').getByText('member', { exact: true }).waitFor();
    expect(await readable(theirPage)).not.toContain(colleague.password);

    // A member makes a key of their own for a script, no higher than their role.
    await theirPage.getByRole('button', { name: /^Account:/ }).click();
    await theirPage.getByRole('menuitem', { name: 'Your API keys' }).click();
    await theirPage.getByRole('heading', { name: 'Keys you made' }).waitFor();
    await theirPage.getByRole('button', { name: 'Create a key' }).click();
    const making = theirPage.getByRole('dialog', { name: 'Create an API key' });
    await making.getByRole('textbox', { name: /^Label/ }).fill('grace-notebook');
    await making.getByRole('combobox', { name: 'Role' }).click();
    expect(await theirPage.getByRole('option').allTextContents()).toEqual(['member', 'viewer']);
    await theirPage.getByRole('option', { name: 'viewer' }).click();
    await making.getByRole('button', { name: 'Create' }).click();
    await theirPage.getByTestId('new-key').waitFor();
    await theirPage.getByRole('button', { name: 'I have copied it' }).click();
    // Named: the create dialog may still be fading out beside it on a loaded machine.
    await theirPage.getByRole('dialog', { name: 'Your new API key' }).waitFor({ state: 'hidden' });
    const mine = theirPage.getByRole('table', { name: 'API keys' });
    await mine.getByText('grace-notebook').waitFor();
    await mine.getByText(colleague.name).waitFor();
    await session.shot('people-member-keys', theirPage);
    await session.checkA11y('people-member-keys', theirPage);

    // The admin sees them among the people, and the invitation gone; its link works once.
    await page.reload();
    await people.getByText(colleague.email).waitFor();
    await page.getByText(/^No pending invitation\./).waitFor();
    const again = await session.browser.newPage();
    await again.goto(link);
    await again.getByText(/^This invitation is not valid: it was used, revoked or has expired\./).waitFor();
    await again.close();
  });

  it('has a one-time password replaced before anything else', async () => {
    const newcomer = await session.newPerson('viewer');
    expect(newcomer.oneTime).toBe(true);
    const context = await session.browser.newContext({ viewport: { width: 1440, height: 900 } });
    try {
      const their = await context.newPage();
      await session.signInAs(newcomer, their);
      const form = their.getByRole('form', { name: 'Choose your password' });
      await form.waitFor();
      await session.shot('people-one-time-password', their);
      // Nothing else until it is done, wherever they go.
      await their.goto(`${session.origin}/datasets`);
      await form.waitFor();
      await expect(their.getByRole('navigation', { name: 'Main' }).count()).resolves.toBe(0);
      await session.checkA11y('people-one-time-password', their);
      const chosen = `mine-${randomUUID()}`;
      await form.getByLabel(/^One-time password/).fill(newcomer.password);
      await form.getByLabel(/^New password \*/).fill(chosen);
      await form.getByLabel(/^New password, again/).fill(chosen);
      await form.getByRole('button', { name: 'Save and continue' }).click();
      await their.getByRole('navigation', { name: 'Main' }).waitFor();
      expect(new URL(their.url()).pathname).toBe('/datasets');
      await their.getByRole('banner').getByText('viewer', { exact: true }).waitFor();
      // The one-time password is spent: the chosen one signs in.
      await their.getByRole('button', { name: /^Account:/ }).click();
      await their.getByRole('menuitem', { name: 'Sign out' }).click();
      await their.getByText('You signed out.').waitFor();
      await session.signInAs({ email: newcomer.email, password: chosen }, their);
      await their.getByRole('navigation', { name: 'Main' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('signs a removed person out at once', async () => {
    page.once('dialog', (d) => {
      expect(d.message()).toMatch(/Their sessions in .* end at once, and the API keys they made in it are revoked/);
      void d.accept();
    });
    await page.getByRole('button', { name: `Remove ${colleague.name}` }).click();
    await expect.poll(() => page.getByRole('table', { name: 'People' }).getByText(colleague.email).count()).toBe(0);
    await theirPage.getByRole('link', { name: 'Datasets' }).click();
    await theirPage.getByText(/You were signed out: your session has ended/).waitFor();
    expect(new URL(theirPage.url()).pathname).toBe('/sign-in');
    await session.shot('people-removed', theirPage);
  });
});
