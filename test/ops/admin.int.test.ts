import { describe, expect, it } from 'vitest';
import { queues } from '@sightline/queues';
import { buildStack } from '../support/app';
import { useStack } from '../support/fixtures';

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const basic = (password: string, user = 'ops') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const {
  stack,
  orgs: [{ key: orgKey }],
} = useStack({ worker: false, env: { ADMIN_API_KEY: ADMIN_KEY }, orgs: ['org'] });

const get = (url: string, headers: Record<string, string> = {}) => stack.app.inject({ method: 'GET', url, headers });

describe('queue dashboard at /admin/queues', () => {
  it('answers 401 with a Basic challenge without the admin key, or with a wrong one', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: basic('admin-key-0123456789abcdeX') },
      { 'x-admin-key': 'nope' },
      { authorization: 'Bearer ' + ADMIN_KEY },
    ];
    for (const headers of attempts) {
      for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
        const res = await get(url, headers);
        expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Basic realm="Sightline admin"/);
        expect(res.json()).toEqual({ detail: expect.stringMatching(/admin key/) });
      }
    }
  });

  it("is not opened by an organization's API key, however it is sent", async () => {
    const attempts: Record<string, string>[] = [
      { 'x-api-key': orgKey },
      { authorization: basic(orgKey) },
      { 'x-admin-key': orgKey },
    ];
    for (const headers of attempts) {
      expect((await get('/admin/queues/api/queues', headers)).statusCode, JSON.stringify(headers)).toBe(401);
    }
  });

  it('opens with the admin key as a Basic password (any user) or in x-admin-key, and lists every queue', async () => {
    const page = await get('/admin/queues', { authorization: basic(ADMIN_KEY, 'anyone') });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<base href="/admin/queues/"');

    const api = await get('/admin/queues/api/queues', { 'x-admin-key': ADMIN_KEY });
    expect(api.statusCode).toBe(200);
    const names = (api.json() as { queues: { name: string }[] }).queues.map((q) => q.name);
    expect(names.sort()).toEqual(Object.keys(queues).sort());
  });

  it("loads the page's scripts and styles from its own origin, which the CSP allows", async () => {
    const auth = { authorization: basic(ADMIN_KEY) };
    const page = await get('/admin/queues/', auth);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    // Scripts run only from files (the one inline block is JSON data, which no CSP blocks).
    for (const [tag] of page.body.matchAll(/<script\b[^>]*>/g)) expect(tag).toMatch(/\bsrc="|type="application\/json"/);
    const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="(static\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.filter((a) => a.endsWith('.js')).length).toBeGreaterThan(0);
    expect(assets.filter((a) => a.endsWith('.css')).length).toBeGreaterThan(0);
    for (const asset of assets) expect((await get(`/admin/queues/${asset}`, auth)).statusCode, asset).toBe(200);
  });

  it('only shows the queues by default: emptying, cleaning, retrying or pausing is refused and changes nothing', async () => {
    const sent = await stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/trace_log',
      headers: { 'x-api-key': orgKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ project_name: 'admin', trace_name: 'kept' }),
    });
    expect(sent.statusCode).toBe(200);
    const waiting = await stack.app.spanWrites[0]!.queue.getWaitingCount();
    expect(waiting).toBeGreaterThan(0);
    for (const action of [
      'span-write/empty',
      'span-write/clean/waiting',
      'span-write/obliterate',
      'completion/retry/failed',
      'span-write/pause',
      'pause',
    ]) {
      const res = await stack.app.inject({
        method: 'PUT',
        url: `/admin/queues/api/queues/${action}`,
        headers: { 'x-admin-key': ADMIN_KEY },
      });
      expect(
        res.statusCode === 405 || (action === 'pause' && res.statusCode === 200),
        `${action}: ${res.statusCode}`,
      ).toBe(true);
    }
    expect(await stack.app.spanWrites[0]!.queue.getWaitingCount()).toBe(waiting);
    for (const queue of stack.app.allQueues) expect(await queue.isPaused(), queue.name).toBe(false);
    expect(
      (await get('/admin/queues/api/queues', { 'x-admin-key': ADMIN_KEY }))
        .json()
        .queues.every((q: { readOnlyMode: boolean }) => q.readOnlyMode),
    ).toBe(true);
  });
});

describe('with ADMIN_QUEUE_ACTIONS', () => {
  it('takes changes from its own pages, and refuses them sent from another site', async () => {
    const writable = await buildStack({
      worker: false,
      env: { ADMIN_API_KEY: ADMIN_KEY, ADMIN_QUEUE_ACTIONS: 'true' },
    });
    try {
      const url = '/admin/queues/api/queues/eval/retry/failed';
      const send = (headers: Record<string, string>) =>
        writable.app.inject({ method: 'PUT', url, headers: { 'x-admin-key': ADMIN_KEY, ...headers } });
      expect((await send({ 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
      expect((await send({ origin: 'https://evil.example' })).statusCode).toBe(403);
      expect((await send({ 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
    } finally {
      await writable.close();
    }
  });
});

describe('without ADMIN_API_KEY', () => {
  it('has no dashboard at all (404), whatever key is sent', async () => {
    const bare = await buildStack({ worker: false });
    try {
      for (const url of ['/admin/queues', '/admin/queues/api/queues']) {
        for (const headers of [{}, { 'x-admin-key': ADMIN_KEY }, { 'x-api-key': orgKey }]) {
          const res = await bare.app.inject({ url, headers });
          expect(res.statusCode, url).toBe(404);
          expect(res.json()).toEqual({ detail: 'Not Found' });
        }
      }
    } finally {
      await bare.close();
    }
  });
});
