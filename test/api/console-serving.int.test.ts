import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import consolePlugin, { CONSOLE_DIST } from '../../apps/api/src/plugins/console';
import errors from '../../apps/api/src/plugins/errors';
import { ensureConsoleBuilt } from '../../scripts/build-web';
import { buildStack, type TestStack } from '../support/app';

let stack: TestStack;
const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

beforeAll(async () => {
  await ensureConsoleBuilt(() => {});
  stack = await buildStack({ worker: false });
}, 180_000);
afterAll(() => stack.close());

describe('the console served by the API node', () => {
  it('serves index.html at / and for the console routes, not cached', async () => {
    for (const url of [
      '/',
      '/projects',
      '/projects/6f1c8f7e-2f6b-4c39-9d7e-1d2a3b4c5d6e/traces?status=error',
      '/settings',
      '/sign-in',
    ]) {
      const res = await stack.app.inject({ url, headers: html });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<div id="root">');
    }
    // `/` is the console whatever the client accepts (curl sends */*).
    expect((await stack.app.inject({ url: '/' })).statusCode).toBe(200);
  });

  it('caches hashed assets for a year, immutable', async () => {
    const asset = readdirSync(join(CONSOLE_DIST, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await stack.app.inject({ url: `/assets/${asset}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect((await stack.app.inject({ url: '/assets/nope.js' })).statusCode).toBe(404);
  });

  it('leaves the API, the probes, the docs and the metrics as they were', async () => {
    const api = await stack.app.inject({ url: '/api/svc/v1/no-such-route', headers: html });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ detail: 'Not Found' });
    expect((await stack.app.inject({ url: '/api/svc/v1/', headers: html })).statusCode).toBe(401);
    expect((await stack.app.inject({ url: '/healthz', headers: html })).json()).toEqual({ status: 'ok' });
    expect((await stack.app.inject({ url: '/openapi.json', headers: html })).json()).toHaveProperty('openapi');
    expect((await stack.app.inject({ url: '/metrics', headers: html })).body).toContain(
      'sightline_http_request_duration_seconds',
    );
    const docs = await stack.app.inject({ url: '/docs/', headers: html });
    expect(docs.body).not.toContain('<div id="root">');
    // Without a dashboard key, /admin/queues stays a 404, not the console.
    expect((await stack.app.inject({ url: '/admin/queues', headers: html })).statusCode).toBe(404);
  });

  it('answers 404 to a non-browser request for an unknown path, and to other methods', async () => {
    expect((await stack.app.inject({ url: '/projects', headers: { accept: 'application/json' } })).statusCode).toBe(
      404,
    );
    const post = await stack.app.inject({ method: 'POST', url: '/projects', headers: html, payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json()).toEqual({ detail: 'Not Found' });
  });

  it('keeps the JavaScript a first visit loads under 400 KB gzipped (pages load as they are visited)', () => {
    const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
    const initial = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    const bytes = initial.reduce((n, f) => n + gzipSync(readFileSync(join(CONSOLE_DIST, f))).length, 0);
    expect(initial.length).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(400 * 1024);
    // Every page is a chunk of its own, not in the entry.
    const assets = readdirSync(join(CONSOLE_DIST, 'assets'));
    for (const page of ['TracesPage', 'TracePage', 'SettingsPage', 'ProjectsPage', 'DashboardPage', 'SessionsPage'])
      expect(
        assets.some((f) => f.startsWith(page) && !initial.includes(`assets/${f}`)),
        page,
      ).toBe(true);
  });

  it('says how to build the console when it is not built', async () => {
    const app = Fastify();
    await app.register(errors);
    await app.register(consolePlugin, { dir: await mkdtemp(join(tmpdir(), 'no-console-')) });
    const res = await app.inject({ url: '/projects', headers: html });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('npm run build:web');
    expect((await app.inject({ url: '/' })).statusCode).toBe(503);
    await app.close();
  });
});
