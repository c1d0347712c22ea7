import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addApiKey } from '@sightline/db';
import { buildStack, call } from '../support/app';
import { useStack } from '../support/fixtures';
import { newOrganization, redisUrl } from '../support/services';

const {
  stack,
  sql,
  orgs: [{ key }],
} = useStack({ worker: false, orgs: ['org'] });

// The release, as the root package.json says: what the health check and the OpenAPI document must report.
const RELEASE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

describe('authentication', () => {
  it('answers 401 with a detail when the key is missing', async () => {
    const res = await call(stack.app, null, 'POST', '/project', { name: 'x' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: expect.stringMatching(/API key/) });
  });
  it('answers 401 for an unknown key', async () => {
    const res = await call(stack.app, 'sl_not-a-key', 'GET', '/');
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toMatch(/invalid API key/);
  });
  it('accepts the key in x-api-key and in x-user-id, ignoring SDK headers', async () => {
    for (const header of ['x-api-key', 'x-user-id']) {
      const res = await stack.app.inject({
        method: 'GET',
        url: '/api/svc/v1/',
        headers: {
          [header]: key,
          'x-sdk-language': 'python',
          'x-sdk-version': '0.2.0',
          'x-sdk-integrations': 'langchain,openai',
        },
      });
      expect(res.statusCode, header).toBe(200);
    }
  });
  it('caches lookups for AUTH_CACHE_TTL_MS: a new key is honoured and a deleted one refused once its entry ages', async () => {
    const short = await buildStack({ worker: false, env: { AUTH_CACHE_TTL_MS: '1000' } });
    try {
      const org = await newOrganization(sql, 'cache');
      const status = async (k: string) => (await call(short.app, k, 'GET', '/')).statusCode;
      const unknown = `sl_later-${crypto.randomUUID()}`;
      expect(await status(unknown)).toBe(401);
      await addApiKey(sql, org.id, unknown);
      // The refusal was cached: the key is honoured only once that entry has aged.
      expect(await status(unknown)).toBe(401);
      await expect.poll(() => status(unknown), { interval: 50, timeout: 5000 }).toBe(200);

      await sql`delete from api_keys where organization_id = ${org.id}`;
      // Still cached; once aged, the stale entry answers while it is refreshed, then the key is refused.
      expect(await status(unknown)).toBe(200);
      await expect.poll(() => status(unknown), { interval: 50, timeout: 5000 }).toBe(401);
    } finally {
      await short.close();
    }
  });
  it('stores only a hash of the key', async () => {
    const rows = await sql`select * from api_keys`;
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows.some((r) => r.key_hint === key.slice(-4))).toBe(true);
  });
});

describe('health', () => {
  it('GET /api/svc/v1/ answers an object of strings with status, version and dependency states', async () => {
    const res = await call(stack.app, key, 'GET', '/');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', version: RELEASE, postgres: 'ok', redis: 'ok' });
    expect(Object.values(body).every((v) => typeof v === 'string')).toBe(true);
  });
  it('has unauthenticated /healthz and /readyz', async () => {
    expect((await stack.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const ready = await stack.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ postgres: 'ok', redis: 'ok' });
  });
  it('is ready when it starts: its Redis connections are open before it serves', async () => {
    // Redis behind a proxy that takes half a second to connect, as on a loaded machine or a far network.
    const redis = new URL(redisUrl());
    const slow = createServer((client) => {
      setTimeout(() => {
        const upstream = connect(Number(redis.port), redis.hostname);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      }, 500);
    });
    await new Promise<void>((listening) => slow.listen(0, '127.0.0.1', listening));
    const { port } = slow.address() as AddressInfo;
    const fresh = await buildStack({ worker: false, env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const ready = await fresh.app.inject({ url: '/readyz' });
      expect(ready.json()).toMatchObject({ redis: 'ok' });
      expect(ready.statusCode).toBe(200);
    } finally {
      await fresh.close();
      slow.close();
    }
  });
  it('/readyz answers 503 while PostgreSQL is unreachable', async () => {
    const down = await buildStack({ worker: false, env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' } });
    try {
      const res = await down.app.inject({ url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ postgres: 'unavailable', redis: 'ok' });
    } finally {
      await down.close();
    }
  });
  it('/readyz answers 503 while Redis is unreachable, and writes answer 503', async () => {
    const down = await buildStack({ worker: false, env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const res = await down.app.inject({ url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ postgres: 'ok', redis: 'unavailable' });
      const write = await call(down.app, key, 'POST', '/trace_log', {
        trace_id: crypto.randomUUID(),
        project_name: 'p',
      });
      expect(write.statusCode).toBe(503);
    } finally {
      await down.close();
    }
  });
});

describe('routing and documents', () => {
  it('answers unknown routes with 404 {"detail":"Not Found"}', async () => {
    const res = await call(stack.app, key, 'GET', '/no/such/route');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not Found' });
  });
  it("serves the OpenAPI document generated from the schemas, with package.json's version, and a docs page", async () => {
    const res = await stack.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.info.version).toBe(RELEASE);
    const traceLog = doc.paths['/api/svc/v1/trace_log'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(traceLog.properties)).toEqual(
      expect.arrayContaining(['trace_id', 'start_timestamp', 'log_sample_rate', 'scores']),
    );
    expect(doc.paths['/api/svc/v1/get_trace_logs']).toBeDefined();
    const completion = doc.paths['/api/svc/v1/completion'].post.responses;
    expect(Object.keys(completion['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['content', 'trace_id', 'inference_id', 'cost', 'cache_hit']),
    );
    expect(completion['422'].content['application/json'].schema.properties.detail.type).toBe('array');
    expect(doc.paths['/api/svc/v1/experiment/{experiment_uuid}/stats'].get.responses['200']).toBeDefined();
    const docs = await stack.app.inject({ url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/html/);
  });
});
