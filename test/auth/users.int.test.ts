import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ensureOrganization } from '@sightline/db';
import { buildStack, call } from '../support/app';
import { useStack } from '../support/fixtures';
import { callAs, newPerson, signIn } from '../support/people';

// An organization's people as its admins manage them: who they are, their roles, ending their sessions and
// removing them (at once on every API process, with the keys they made).
const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ worker: false, orgs: ['users', 'users-other'] });

/** An organization of people only: no API key, so that its admins are its only way in. */
const peopleOnly = async () => ensureOrganization(sql, `people-only-${randomBytes(4).toString('hex')}`);

const signedIn = async (orgId: string, role: 'admin' | 'member' | 'viewer') => {
  const person = await newPerson(sql, orgId, role);
  return { ...person, cookie: await signIn(stack.app, person) };
};

describe('GET /users', () => {
  it("lists the organization's people with their roles and last request, to any role, and no one else's", async () => {
    const ada = await signedIn(org.id, 'member');
    const bob = await newPerson(sql, org.id, 'admin');
    const stranger = await newPerson(sql, other.id, 'admin');
    const viewer = await signedIn(org.id, 'viewer');
    const res = await callAs(stack.app, viewer.cookie, 'GET', '/users');
    expect(res.statusCode).toBe(200);
    const users = res.json() as { id: string; last_seen_at: string | null }[];
    expect(users.find((u) => u.id === ada.id)).toEqual({
      id: ada.id,
      email: ada.email,
      name: ada.name,
      role: 'member',
      created_at: expect.any(String),
      last_seen_at: expect.any(String),
    });
    // Bob never signed in.
    expect(users.find((u) => u.id === bob.id)).toMatchObject({ role: 'admin', last_seen_at: null });
    expect(users.map((u) => u.id)).not.toContain(stranger.id);
  });
});

describe('PATCH /users/{id}', () => {
  it("changes a person's role, which their session follows at its next request, and records who did it", async () => {
    const admin = await signedIn(org.id, 'admin');
    const ada = await signedIn(org.id, 'member');
    expect((await callAs(stack.app, ada.cookie, 'POST', '/project', { name: `by-${ada.id}` })).statusCode).toBe(200);
    const res = await callAs(stack.app, admin.cookie, 'PATCH', `/users/${ada.id}`, { role: 'viewer' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: ada.id, role: 'viewer' });
    expect((await callAs(stack.app, ada.cookie, 'POST', '/project', { name: `by-${ada.id}-2` })).statusCode).toBe(403);
    const { entries } = (await call(stack.app, org.key, 'GET', `/audit-log?actor=${admin.id}`)).json();
    expect(entries[0]).toMatchObject({
      action: 'update',
      actor: { key_id: null, user_id: admin.id, label: admin.email, role: 'admin' },
      target: { kind: 'user', id: ada.id, name: ada.email },
      before: { role: 'member' },
      after: { role: 'viewer' },
    });
  });

  it('never demotes the last admin (409), is refused to members, and knows no one of another organization', async () => {
    const orgId = await peopleOnly();
    const only = await signedIn(orgId, 'admin');
    const last = await callAs(stack.app, only.cookie, 'PATCH', `/users/${only.id}`, { role: 'member' });
    expect([last.statusCode, last.json().detail]).toEqual([409, expect.stringMatching(/last admin/)]);
    expect((await callAs(stack.app, only.cookie, 'GET', '/me')).json().role).toBe('admin');

    const member = await signedIn(orgId, 'member');
    expect((await callAs(stack.app, member.cookie, 'PATCH', `/users/${member.id}`, { role: 'admin' })).statusCode).toBe(
      403,
    );
    const stranger = await newPerson(sql, other.id, 'viewer');
    expect((await callAs(stack.app, only.cookie, 'PATCH', `/users/${stranger.id}`, { role: 'admin' })).statusCode).toBe(
      404,
    );
    const [{ role }] = await sql`select role from memberships where user_id = ${stranger.id}`;
    expect(role).toBe('viewer');
  });
});

describe('DELETE /users/{id}', () => {
  it('removes the person: their sessions end at once on every API process, the keys they made are refused', async () => {
    const second = await buildStack({ worker: false, env: { AUTH_CACHE_TTL_MS: '300' } });
    try {
      const admin = await signedIn(org.id, 'admin');
      const ada = await signedIn(org.id, 'member');
      // Ada also belongs to another organization, which she keeps.
      await sql`insert into memberships (organization_id, user_id, role) values (${other.id}, ${ada.id}, 'viewer')`;
      const key = (
        await callAs(stack.app, ada.cookie, 'POST', '/api-keys', { role: 'member', label: 'ada-ci' })
      ).json();
      expect(key.created_by).toEqual({ id: ada.id, email: ada.email, name: ada.name });
      // Both processes know her session and her key (the second has it cached).
      for (const app of [stack.app, second.app]) {
        expect((await callAs(app, ada.cookie, 'GET', '/me')).statusCode).toBe(200);
        expect((await call(app, key.key, 'GET', '/me')).statusCode).toBe(200);
      }

      const removed = await callAs(stack.app, admin.cookie, 'DELETE', `/users/${ada.id}`);
      expect([removed.statusCode, removed.json()]).toEqual([200, { id: ada.id, deleted: true }]);
      for (const app of [stack.app, second.app])
        expect((await callAs(app, ada.cookie, 'GET', '/me')).json()).toEqual({
          detail: 'your session has ended: sign in again',
        });
      expect((await call(stack.app, key.key, 'GET', '/me')).statusCode).toBe(401);
      // The other process drops its cached key within AUTH_CACHE_TTL_MS.
      const start = Date.now();
      while ((await call(second.app, key.key, 'GET', '/me')).statusCode !== 401) {
        expect(Date.now() - start).toBeLessThan(5000);
        await new Promise((r) => setTimeout(r, 50));
      }
      const users = (await callAs(stack.app, admin.cookie, 'GET', '/users')).json();
      expect(users.map((u: { id: string }) => u.id)).not.toContain(ada.id);
      // She signs in to the organization she still belongs to.
      expect((await callAs(stack.app, await signIn(stack.app, ada), 'GET', '/me')).json()).toMatchObject({
        organization_id: other.id,
        role: 'viewer',
      });
      expect((await callAs(stack.app, admin.cookie, 'DELETE', `/users/${ada.id}`)).statusCode).toBe(404);
      const { entries } = (await call(stack.app, org.key, 'GET', '/audit-log?target_kind=user')).json();
      expect(entries[0]).toMatchObject({
        action: 'remove',
        actor: { user_id: admin.id },
        target: { id: ada.id },
        before: { role: 'member', keys_revoked: 1 },
      });
    } finally {
      await second.close();
    }
  });

  it('never removes the last admin, nor the maker of every admin key, and is refused to members', async () => {
    const orgId = await peopleOnly();
    const first = await signedIn(orgId, 'admin');
    const last = await callAs(stack.app, first.cookie, 'DELETE', `/users/${first.id}`);
    expect([last.statusCode, last.json().detail]).toEqual([409, expect.stringMatching(/last admin/)]);

    const second = await signedIn(orgId, 'admin');
    const key = (await callAs(stack.app, second.cookie, 'POST', '/api-keys', { role: 'admin', label: 'ops' })).json();
    const keys = await callAs(stack.app, first.cookie, 'DELETE', `/users/${second.id}`);
    expect([keys.statusCode, keys.json().detail]).toEqual([409, expect.stringMatching(/admin keys/)]);
    expect((await call(stack.app, key.key, 'GET', '/me')).statusCode).toBe(200);
    // With a service key beside it, the person goes and their key with them.
    await callAs(stack.app, first.cookie, 'POST', '/api-keys', { role: 'admin', label: 'svc', service: true });
    expect((await callAs(stack.app, first.cookie, 'DELETE', `/users/${second.id}`)).statusCode).toBe(200);
    expect((await call(stack.app, key.key, 'GET', '/me')).statusCode).toBe(401);

    const member = await signedIn(orgId, 'member');
    expect((await callAs(stack.app, member.cookie, 'DELETE', `/users/${first.id}`)).statusCode).toBe(403);
  });
});

describe('DELETE /users/{id}/sessions', () => {
  it('ends every session of the person in the organization at once on every process, and only there', async () => {
    const second = await buildStack({ worker: false });
    try {
      const admin = await signedIn(org.id, 'admin');
      const ada = await newPerson(sql, org.id, 'member');
      await sql`insert into memberships (organization_id, user_id, role) values (${other.id}, ${ada.id}, 'member')`;
      const laptop = await signIn(stack.app, ada);
      const phone = await signIn(second.app, ada);
      const elsewhere = await signIn(stack.app, ada);
      await callAs(stack.app, elsewhere, 'POST', '/auth/organization', { organization_id: other.id });

      const res = await callAs(stack.app, admin.cookie, 'DELETE', `/users/${ada.id}/sessions`);
      expect(res.json()).toEqual({ id: ada.id, sessions_ended: 2 });
      for (const [app, cookie] of [
        [stack.app, laptop],
        [second.app, phone],
        [stack.app, phone],
        [second.app, laptop],
      ] as const)
        expect((await callAs(app, cookie, 'GET', '/me')).statusCode).toBe(401);
      expect((await callAs(second.app, elsewhere, 'GET', '/me')).json().organization_id).toBe(other.id);
      // Still a member: they sign in again.
      expect((await callAs(stack.app, await signIn(stack.app, ada), 'GET', '/me')).statusCode).toBe(200);
      const stranger = await newPerson(sql, other.id, 'member');
      expect((await callAs(stack.app, admin.cookie, 'DELETE', `/users/${stranger.id}/sessions`)).statusCode).toBe(404);
    } finally {
      await second.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes every route of people and invitations, with its summary, tag, parameters and answers', async () => {
    const doc = (await stack.app.inject({ url: '/openapi.json' })).json();
    const routes = [
      ['get', '/users'],
      ['patch', '/users/{id}'],
      ['delete', '/users/{id}'],
      ['delete', '/users/{id}/sessions'],
      ['get', '/invitations'],
      ['post', '/invitations'],
      ['delete', '/invitations/{id}'],
      ['get', '/auth/invitation'],
      ['post', '/auth/accept-invitation'],
    ];
    for (const [method, path] of routes) {
      const op = doc.paths[`/api/svc/v1${path}`]?.[method];
      expect(op, `${method} ${path}`).toMatchObject({ summary: expect.any(String), tags: [expect.any(String)] });
      expect(op.responses['200'].content['application/json'].schema, `${method} ${path}`).toBeDefined();
      if (path.includes('{id}')) expect(op.parameters.map((p: { name: string }) => p.name)).toContain('id');
      if (method === 'post' || method === 'patch') expect(op.requestBody, `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/api/svc/v1/auth/invitation'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'token',
    ]);
  });
});
