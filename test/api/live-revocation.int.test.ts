import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStack, call, readTrace, type TestStack } from '../support/app';
import { useStack } from '../support/fixtures';
import { credentialHeaders, openLive } from '../support/live';
import { callAs, newPerson, signIn } from '../support/people';

// Short, so that the other node's cache entry ages quickly; the streams re-check their key at this pace.
const AUTH_CACHE_TTL_MS = '1000';

const {
  stack,
  sql,
  orgs: [admin],
} = useStack({ orgs: ['live-revocation'], env: { AUTH_CACHE_TTL_MS } });
// A second API node of the same deployment: its own auth cache, the same Redis, queues and database.
let second: TestStack;
const bases: string[] = [];
beforeAll(async () => {
  second = await buildStack({ worker: false, env: { AUTH_CACHE_TTL_MS, QUEUE_PREFIX: stack.prefix } });
  for (const app of [stack.app, second.app]) bases.push(await app.listen({ port: 0, host: '127.0.0.1' }));
});
afterAll(() => second?.close());

async function writeRoot(project: string) {
  const id = randomUUID();
  const res = await call(stack.app, admin.key, 'POST', '/trace_log', { trace_id: id, project_name: project });
  expect(res.statusCode, res.body).toBe(200);
  expect((await readTrace(stack.app, admin.key, id)).statusCode).toBe(200);
  return id;
}

describe('the live tail of a revoked key', () => {
  it('ends with an error event on every API node, and sends nothing afterwards', async () => {
    const project = (await call(stack.app, admin.key, 'POST', '/project', { name: 'revoked' })).json().uuid;
    const made = await call(stack.app, admin.key, 'POST', '/api-keys', { role: 'viewer', label: 'leaver' });
    const { id, key } = made.json() as { id: string; key: string };
    const streams = await Promise.all(bases.map((base) => openLive(base, key, project)));
    // Another key's stream on the node that did not revoke: the rows written afterwards do go out.
    const control = await openLive(bases[1], admin.key, project);
    try {
      const before = await writeRoot('revoked');
      for (const live of [...streams, control])
        await expect.poll(() => live.traceIds(), { timeout: 10_000 }).toEqual([before]);

      expect((await call(stack.app, admin.key, 'DELETE', `/api-keys/${id}`)).statusCode).toBe(200);
      for (const live of streams) {
        await expect.poll(() => live.ended(), { timeout: 10_000 }).toBe(true);
        expect(live.events.at(-1)).toEqual({ event: 'error', data: { detail: 'API key revoked' } });
      }

      const after = await writeRoot('revoked');
      await expect.poll(() => control.traceIds(), { timeout: 10_000 }).toEqual([before, after]);
      for (const live of streams) expect(live.traceIds()).toEqual([before]);
      expect(control.ended()).toBe(false);
      // And the key opens no new stream, on either node.
      for (const base of bases) {
        const res = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${project}`, {
          headers: credentialHeaders(key),
        });
        expect(res.status).toBe(401);
      }
    } finally {
      await Promise.all([...streams, control].map((live) => live.close()));
    }
  });
});

describe('the live tail of a signed-in person', () => {
  it('streams with the session cookie, and ends on every API node once the session ends', async () => {
    const project = (await call(stack.app, admin.key, 'POST', '/project', { name: 'by-cookie' })).json().uuid;
    const cookie = await signIn(stack.app, await newPerson(sql, admin.id, 'viewer'));
    const streams = await Promise.all(bases.map((base) => openLive(base, cookie, project)));
    const control = await openLive(bases[1], admin.key, project);
    try {
      const before = await writeRoot('by-cookie');
      for (const live of [...streams, control])
        await expect.poll(() => live.traceIds(), { timeout: 10_000 }).toEqual([before]);

      // Signed out in another tab.
      expect((await callAs(stack.app, cookie, 'POST', '/auth/logout')).statusCode).toBe(200);
      for (const live of streams) {
        await expect.poll(() => live.ended(), { timeout: 10_000 }).toBe(true);
        expect(live.events.at(-1)).toEqual({
          event: 'error',
          data: { detail: 'your session has ended: sign in again' },
        });
      }
      const after = await writeRoot('by-cookie');
      await expect.poll(() => control.traceIds(), { timeout: 10_000 }).toEqual([before, after]);
      for (const live of streams) expect(live.traceIds()).toEqual([before]);
      for (const base of bases) {
        const res = await fetch(`${base}/api/svc/v1/traces/live?project_uuid=${project}`, {
          headers: credentialHeaders(cookie),
        });
        expect(res.status).toBe(401);
      }
    } finally {
      await Promise.all([...streams, control].map((live) => live.close()));
    }
  });
});
