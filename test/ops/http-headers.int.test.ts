import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsOrigins } from '../../apps/api/src/plugins/security';
import { appWithLogs, buildStack, call } from '../support/app';
import { useSql } from '../support/fixtures';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const {
  orgs: [{ key }],
} = useSql({ orgs: ['org'] });
let app: FastifyInstance;
let lines: Record<string, unknown>[];

beforeAll(async () => {
  ({ app, lines } = await appWithLogs());
});
afterAll(() => app.close());

describe('request ids', () => {
  it('generates one when none is sent, returns it in x-request-id, and puts it on the log lines of the request', async () => {
    lines.length = 0;
    const res = await call(app, key, 'GET', '/');
    expect(res.statusCode).toBe(200);
    const id = res.headers['x-request-id'];
    expect(id).toMatch(UUID);
    const own = lines.filter((l) => l.reqId === id);
    expect(own.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  });

  it('keeps a safe incoming x-request-id, and replaces an unsafe or oversized one', async () => {
    for (const given of ['abc-123', 'Root=1-5759e988-bd862e3f:a/b+c@d.e_f', 'x'.repeat(128)]) {
      const res = await app.inject({ url: '/healthz', headers: { 'x-request-id': given } });
      expect(res.headers['x-request-id'], given).toBe(given);
    }
    for (const given of ['x'.repeat(129), 'two words', '{"msg":"forged"}', 'a\tb', 'é', '']) {
      const res = await app.inject({ url: '/healthz', headers: { 'x-request-id': given } });
      expect(res.headers['x-request-id'], given).toMatch(UUID);
    }
  });

  it('returns the id on errors, 404s and refusals before routing, and every log line carries one', async () => {
    lines.length = 0;
    const responses = await Promise.all([
      app.inject({ url: '/no/such/path', headers: { 'x-request-id': 'req-404' } }),
      call(app, null, 'GET', '/'), // 401
      call(app, key, 'POST', '/trace_log', { trace_id: 'not-a-uuid' }), // 422
      app.inject({
        method: 'POST',
        url: '/api/svc/v1/trace_log',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: '{',
      }), // 422
      app.inject({ url: '/%E0%A4%A', headers: { 'x-request-id': 'req-bad-url' } }), // refused before routing
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual([404, 401, 422, 422, 400]);
    for (const res of responses) expect(res.headers['x-request-id']).toMatch(/^(req-404|req-bad-url|[0-9a-f-]{36})$/);
    expect(responses[0].headers['x-request-id']).toBe('req-404');
    expect(responses[4].headers['x-request-id']).toBe('req-bad-url');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.reqId, JSON.stringify(line)).toEqual(expect.any(String));
    expect(lines.some((l) => l.reqId === 'req-404')).toBe(true);
  });
});

describe('security headers', () => {
  it('are on every response: success, 404, 401 and /metrics', async () => {
    for (const res of [
      await app.inject({ url: '/healthz' }),
      await app.inject({ url: '/nope' }),
      await call(app, null, 'GET', '/'),
      await app.inject({ url: '/metrics' }),
    ]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'self'",
      ]) {
        expect(res.headers['content-security-policy']).toContain(directive);
      }
      expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    }
  });

  it('let /docs load: Swagger UI runs only scripts from its own origin', async () => {
    const page = await app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    const scripts = [...page.body.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toMatch(/\bsrc="\.\/static\//);
    for (const [, src] of page.body.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="\.\/(static\/[^"]+)"/g)) {
      expect((await app.inject({ url: `/docs/${src}` })).statusCode, src).toBe(200);
    }
    expect((await app.inject({ url: '/docs/json' })).statusCode).toBe(200);
  });
});

describe('CORS', () => {
  const preflight = (target: FastifyInstance, origin: string) =>
    target.inject({
      method: 'OPTIONS',
      url: '/api/svc/v1/trace_log',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key,content-type',
      },
    });

  it('is off by default: no CORS header for any origin, and no preflight route', async () => {
    const res = await app.inject({ url: '/healthz', headers: { origin: 'https://app.example' } });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await preflight(app, 'https://app.example');
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.statusCode).toBe(404);
  });

  it('allows exactly the configured origins when CORS_ORIGINS is set', async () => {
    const stack = await buildStack({
      worker: false,
      env: { CORS_ORIGINS: 'https://app.example, https://other.example/' },
    });
    try {
      for (const origin of ['https://app.example', 'https://other.example']) {
        const res = await stack.app.inject({ url: '/api/svc/v1/', headers: { origin, 'x-api-key': key } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(res.headers['access-control-expose-headers']).toContain('x-request-id');
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
      const pre = await preflight(stack.app, 'https://app.example');
      expect(pre.statusCode).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(pre.headers['access-control-allow-methods']).toContain('POST');
      expect(String(pre.headers['access-control-allow-headers']).toLowerCase()).toContain('x-api-key');

      const denied = await stack.app.inject({ url: '/healthz', headers: { origin: 'https://evil.example' } });
      expect(denied.headers['access-control-allow-origin']).toBeUndefined();
      expect(
        (await preflight(stack.app, 'https://evil.example')).headers['access-control-allow-origin'],
      ).toBeUndefined();
    } finally {
      await stack.close();
    }
  });

  it('allows any origin with CORS_ORIGINS=*', async () => {
    const stack = await buildStack({ worker: false, env: { CORS_ORIGINS: '*' } });
    try {
      const res = await stack.app.inject({ url: '/healthz', headers: { origin: 'https://anywhere.example' } });
      expect(res.headers['access-control-allow-origin']).toBe('*');
    } finally {
      await stack.close();
    }
  });

  it('reads CORS_ORIGINS as a list, with * winning and blanks meaning off', () => {
    expect(corsOrigins(undefined)).toBeNull();
    expect(corsOrigins(' , ')).toBeNull();
    expect(corsOrigins('https://a.example/, https://b.example:8443')).toEqual([
      'https://a.example',
      'https://b.example:8443',
    ]);
    expect(corsOrigins('https://a.example,*')).toBe('*');
  });
});
