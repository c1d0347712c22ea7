import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
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

async function createKey(org: string, role: string, label: string) {
  const created = await runScript(
    'scripts/apikey.ts',
    ['create', '--org', org, '--role', role, '--label', label],
    env(),
  );
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim().split('\n').at(-1)!;
}

export type ConsoleSession = {
  /** The server's origin, and its API's base URL. */
  origin: string;
  api: string;
  page: Page;
  /** An admin's and a viewer's key of one new organization. */
  keys: { admin: string; viewer: string };
  shot: (name: string) => Promise<Buffer>;
  signIn: (key: string) => Promise<void>;
  /** Once per page visit, when it has loaded: fails when the page keeps running script while left alone. */
  expectIdle: (what: string) => Promise<void>;
};

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
  session.shot = (name) => session.page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: false });
  session.expectIdle = async (what) => {
    const work = await idleWork(session.page);
    expect(
      work.scriptMs,
      `${what} (${session.page.url()}) ran ${work.scriptMs} ms of script (${work.taskMs} ms of tasks) in ${IDLE_MS} ms left alone`,
    ).toBeLessThan(IDLE_SCRIPT_MS);
  };
  session.signIn = async (key) => {
    await session.page.goto(`${session.origin}/`);
    await session.page.getByLabel('API key').fill(key);
    await session.page.getByRole('button', { name: 'Sign in' }).click();
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await ensureConsoleBuilt(() => {});
    const org = `${label}-${randomUUID()}`;
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
    browser = await chromium.launch({
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
