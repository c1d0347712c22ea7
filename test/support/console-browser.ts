import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import type { Result } from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureConsoleBuilt } from '../../scripts/build-web';
import { freePort, ROOT, runScript, startScript } from './processes';
import { databaseUrl, redisUrl, uniquePrefix } from './services';

// The console in a real browser (Debian's Chromium, driven by playwright-core: no browser is downloaded)
// against the processes `npm start` runs, for a whole test file. Screenshots go to
// test-artifacts/screenshots/.
const SHOTS = `${ROOT}test-artifacts/screenshots`;

const env = () => ({ DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl(), LOG_LEVEL: 'warn' });

async function createPerson(org: string, role: string, person: { email: string; name: string; password?: string }) {
  const made = await runScript(
    'scripts/user.ts',
    [
      'create',
      ...['--org', org, '--role', role, '--email', person.email, '--name', person.name],
      ...(person.password ? ['--password', person.password] : []),
    ],
    env(),
  );
  expect(made.code, made.stderr).toBe(0);
  // Without a password given, the script prints a one-time one on its last line.
  return person.password ?? made.stdout.trim().split('\n').at(-1)!;
}

async function createKey(org: string, role: string, label: string) {
  const created = await runScript(
    'scripts/apikey.ts',
    ['create', '--org', org, '--role', role, '--label', label],
    env(),
  );
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim().split('\n').at(-1)!;
}

/** A person with an account on the server: their email and password (a one-time one when `oneTime`). */
export type ConsolePerson = { email: string; name: string; password: string; oneTime: boolean };

export type ConsoleSession = {
  /** The server's origin, and its API's base URL. */
  origin: string;
  api: string;
  page: Page;
  browser: Browser;
  /** The name of the file's organization. */
  organization: string;
  /** An admin's and a viewer's key of that organization. */
  keys: { admin: string; viewer: string };
  /** Saves the page (the session's unless given) as `<name>`. */
  shot: (name: string, page?: Page) => Promise<Buffer>;
  /** Saves `<name>-<width>-<scheme>` at 1440 and 1024 px wide, in both schemes; leaves the page at 1440, light. */
  shots: (name: string, page?: Page) => Promise<void>;
  /** Signs in with an API key ("Use an API key instead"): a session with the key's role. */
  signIn: (key: string) => Promise<void>;
  /** Makes a person of the organization (`npm run user`); without a password, they get a one-time one. */
  newPerson: (role: 'admin' | 'member' | 'viewer', options?: { password?: string }) => Promise<ConsolePerson>;
  /** Signs in with the person's email and password. */
  signInAs: (person: Pick<ConsolePerson, 'email' | 'password'>, page?: Page) => Promise<void>;
  /** Once per page visit, when it has loaded: fails when the page keeps running script while left alone. */
  expectIdle: (what: string) => Promise<void>;
  /**
   * Once per page, when it has loaded: fails on any serious or critical axe-core violation, in the light and
   * in the dark scheme; saves the dark one's screenshot as `<name>-dark`. The session's page unless given.
   */
  checkA11y: (name: string, page?: Page) => Promise<void>;
};

// axe-core's own build, evaluated in the page (the console's CSP refuses an inline script tag).
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
type AxeViolation = Pick<Result, 'id' | 'impact' | 'help'> & {
  nodes: Pick<Result['nodes'][number], 'target' | 'html' | 'failureSummary'>[];
};

/** The serious and critical violations axe-core finds in the page as it is. */
async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.slice(0, 8).map((n) => {
        const why = n.failureSummary?.split('\n').slice(1).join(' ').trim();
        const html = n.html.length > 160 ? `${n.html.slice(0, 160)}…` : n.html;
        return `    ${n.target.map(String).join(' > ')} ${html}${why ? `\n      ${why}` : ''}`;
      });
      if (v.nodes.length > 8) nodes.push(`    … and ${v.nodes.length - 8} more`);
      return `  ${v.id} (${v.impact}): ${v.help}\n${nodes.join('\n')}`;
    })
    .join('\n');
}

// The page's finite animations still running: colour transitions (a new row's highlight fades over 1.5 s)
// read as a mix of both schemes' colours until they end. Spinners and pulses run forever and do not count.
const RUNNING_TRANSITIONS = `document.getAnimations().filter((a) =>
  a.playState === 'running' && a.effect && a.effect.getComputedTiming().endTime !== Infinity).length`;

/** Switches the console's scheme as the system's would (it follows the system until someone picks one). */
async function switchScheme(page: Page, scheme: 'light' | 'dark') {
  await page.emulateMedia({ colorScheme: scheme });
  await expect
    .poll(() => page.locator('html').getAttribute('data-mantine-color-scheme'), { message: `the ${scheme} scheme` })
    .toBe(scheme);
  await sleep(100); // transitions start on the next frame
  await expect.poll(() => page.evaluate(RUNNING_TRANSITIONS), { message: 'colour transitions', timeout: 5000 }).toBe(0);
}

// A page nobody touches runs no script: a render loop or a busy timer shows up here long before anyone
// notices a warm laptop. The bound is generous (one poll of a list costs a few ms); it is not a speed target.
const IDLE_MS = 3000;
const IDLE_SCRIPT_MS = 50;
// Entry animations (the dashboard's charts) and the last answers first: until a half second passes without
// script, or for at most this long. A page that never quiets is measured all the same.
const SETTLE_MAX_MS = 5000;

/** Script and task time (ms) the page ran over IDLE_MS once it settled. */
async function idleWork(page: Page): Promise<{ scriptMs: number; taskMs: number }> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Performance.enable');
    const read = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
      return { script: get('ScriptDuration'), task: get('TaskDuration') };
    };
    const settleBy = Date.now() + SETTLE_MAX_MS;
    let before = await read();
    for (let quiet = false; !quiet && Date.now() < settleBy;) {
      await sleep(500);
      const now = await read();
      quiet = now.script - before.script < 0.002;
      before = now;
    }
    await sleep(IDLE_MS);
    const after = await read();
    return {
      scriptMs: Math.round((after.script - before.script) * 1000),
      taskMs: Math.round((after.task - before.task) * 1000),
    };
  } finally {
    await cdp.detach();
  }
}

/**
 * Clicks sign-in and waits for the API's answer (its cookie, or its refusal): a test that goes elsewhere at
 * once would otherwise cancel the request on a slow machine and carry on signed out.
 */
async function signedIn(page: Page, path: string, click: () => Promise<void>): Promise<void> {
  const answered = page.waitForResponse((r) => r.url().endsWith(path) && r.request().method() === 'POST');
  await click();
  await answered;
}

/**
 * Starts `npm start`'s processes and Chromium before the file's tests; the handle is filled in then. `env`
 * adds to the processes' environment (read when they start: a fake provider's address, say).
 */
export function useConsole(
  label: string,
  { env: extra = () => ({}) }: { env?: () => Record<string, string> } = {},
): ConsoleSession {
  let child: ChildProcess;
  let browser: Browser;
  const session = { keys: { admin: '', viewer: '' } } as ConsoleSession;
  session.shot = (name, page = session.page) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: false });
  session.shots = async (name, page = session.page) => {
    for (const width of [1440, 1024]) {
      await page.setViewportSize({ width, height: 900 });
      for (const scheme of ['light', 'dark'] as const) {
        await switchScheme(page, scheme);
        await page.screenshot({ path: `${SHOTS}/${name}-${width}-${scheme}.png`, fullPage: false });
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await switchScheme(page, 'light');
  };
  session.expectIdle = async (what) => {
    const work = await idleWork(session.page);
    expect(
      work.scriptMs,
      `${what} (${session.page.url()}) ran ${work.scriptMs} ms of script (${work.taskMs} ms of tasks) in ${IDLE_MS} ms left alone`,
    ).toBeLessThan(IDLE_SCRIPT_MS);
  };
  session.checkA11y = async (name, page = session.page) => {
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await switchScheme(page, scheme);
      if (scheme === 'dark') await page.screenshot({ path: `${SHOTS}/${name}-dark.png`, fullPage: false });
      const violations = await axeViolations(page);
      if (violations.length) found.push(`in the ${scheme} scheme:\n${describeViolations(violations)}`);
    }
    await switchScheme(page, 'light');
    expect(found, `accessibility of ${name} (${page.url()})\n${found.join('\n')}`).toEqual([]);
  };
  session.signIn = async (key) => {
    await session.page.goto(`${session.origin}/`);
    await session.page.getByRole('button', { name: 'Use an API key instead' }).click();
    await session.page.getByLabel('API key').fill(key);
    await signedIn(session.page, '/auth/key', () => session.page.getByRole('button', { name: 'Sign in' }).click());
  };
  session.newPerson = async (role, { password } = {}) => {
    const tag = randomUUID().slice(0, 8);
    const person = { email: `${role}-${tag}@example.com`, name: `${role[0]!.toUpperCase()}${role.slice(1)} ${tag}` };
    const given = await createPerson(session.organization, role, { ...person, password });
    return { ...person, password: given, oneTime: !password };
  };
  session.signInAs = async (person, page = session.page) => {
    await page.goto(`${session.origin}/`);
    await page.getByRole('textbox', { name: 'Email' }).fill(person.email);
    await page.getByLabel(/^Password/).fill(person.password);
    await signedIn(page, '/auth/login', () => page.getByRole('button', { name: 'Sign in', exact: true }).click());
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await ensureConsoleBuilt(() => {});
    const org = `${label}-${randomUUID()}`;
    session.organization = org;
    session.keys.admin = await createKey(org, 'admin', 'ada@example.com');
    session.keys.viewer = await createKey(org, 'viewer', 'viewer@example.com');
    const port = await freePort();
    const started = await startScript(
      'scripts/start.ts',
      { ...env(), ...extra(), LOG_LEVEL: 'info', QUEUE_PREFIX: uniquePrefix(label), PORT: String(port) },
      /listening on http:\/\/127\.0\.0\.1:\d+[\s\S]*worker started|worker started[\s\S]*listening on http/,
      120_000,
    );
    child = started.child;
    session.origin = `http://127.0.0.1:${port}`;
    session.api = `${session.origin}/api/svc/v1`;
    browser = session.browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'],
    });
    session.page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    // SIGTERM: start.ts passes it on to the API and the worker (a SIGKILL would leave them running).
    if (child && child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000).then(() => child.kill('SIGKILL'))]);
    }
  }, 30_000);

  return session;
}
