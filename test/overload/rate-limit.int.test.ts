import { describe, expect, it } from 'vitest';
import { buildApp } from '@sightline/api';
import { addApiKey } from '@sightline/db';
import { ApiEnv, parseEnv } from '@sightline/schemas';
import { buildStack, call, type TestStack } from '../support/app';
import { useSql, useStack } from '../support/fixtures';
import { freePort } from '../support/processes';
import { databaseUrl, newOrganization, redisUrl } from '../support/services';

const { sql } = useSql();

// A read that touches PostgreSQL only.
const list = (stack: { app: TestStack['app'] }, key: string) => call(stack.app, key, 'GET', '/eval-metrics');

describe('rate limits per API key', () => {
  it('are off by default', async () => {
    const stack = await buildStack({ worker: false });
    try {
      const { key } = await newOrganization(sql, 'unlimited');
      const results = [];
      for (let i = 0; i < 50; i++) results.push(await list(stack, key));
      expect(results.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
      expect(results[0].headers['x-ratelimit-limit']).toBeUndefined();
    } finally {
      await stack.close();
    }
  });

  describe('with RATE_LIMIT_PER_MINUTE=3', () => {
    const { stack } = useStack({ worker: false, env: { RATE_LIMIT_PER_MINUTE: '3' } });

    it('answers 429 in the API shape past the limit for that key only', async () => {
      const one = (await newOrganization(sql, 'limited')).key;
      const first = [await list(stack, one), await list(stack, one), await list(stack, one)];
      expect(first.map((r) => r.statusCode)).toEqual([200, 200, 200]);
      expect(first.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0']);
      const refused = await list(stack, one);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual({ detail: expect.stringContaining('rate limit') });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['x-ratelimit-limit']).toBe('3');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      // Writes count too.
      expect((await call(stack.app, one, 'POST', '/trace_log', { project_name: 'p', output: 'o' })).statusCode).toBe(
        429,
      );

      // Another key of the same organization has its own count; so has another organization's.
      const { id: orgId } = await newOrganization(sql, 'other');
      const two = (await newOrganization(sql, 'third')).key;
      expect((await list(stack, two)).statusCode).toBe(200);
      const sibling = await addApiKey(sql, orgId);
      expect((await list(stack, sibling)).statusCode).toBe(200);

      // Probes are never limited.
      expect((await call(stack.app, one, 'GET', '/')).statusCode).toBe(200);
      expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      // The count lives under the queue prefix, keyed by a hash: the key itself is nowhere in Redis.
      const names = await stack.app.redis.keys(`${stack.prefix}:rate-limit:*`);
      expect(names.length).toBeGreaterThanOrEqual(3);
      expect(names.some((n) => n.includes(one))).toBe(false);
    });

    it('is shared by API nodes through Redis', async () => {
      const other = await buildApp(
        parseEnv(ApiEnv, {
          DATABASE_URL: databaseUrl(),
          REDIS_URL: redisUrl(),
          QUEUE_PREFIX: stack.prefix,
          LOG_LEVEL: 'silent',
          RATE_LIMIT_PER_MINUTE: '3',
        }),
      );
      try {
        const key = (await newOrganization(sql, 'shared')).key;
        expect((await list(stack, key)).statusCode).toBe(200);
        expect((await list({ app: other }, key)).statusCode).toBe(200);
        expect((await list(stack, key)).statusCode).toBe(200);
        expect((await list({ app: other }, key)).statusCode).toBe(429);
        expect((await list(stack, key)).statusCode).toBe(429);
      } finally {
        await other.close();
      }
    });
  });

  it('lets requests through when Redis cannot count them', async () => {
    const port = await freePort();
    const app = await buildApp(
      parseEnv(ApiEnv, {
        DATABASE_URL: databaseUrl(),
        REDIS_URL: `redis://127.0.0.1:${port}`,
        QUEUE_PREFIX: 'unreachable',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1',
      }),
    );
    try {
      const key = (await newOrganization(sql, 'no-redis')).key;
      const results = [await list({ app }, key), await list({ app }, key), await list({ app }, key)];
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    } finally {
      await app.close();
    }
  });
});
