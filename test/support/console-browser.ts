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
};

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
