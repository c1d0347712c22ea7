import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { callAs, newPerson, signIn } from '../support/people';

// API keys made by people: each records its maker, carries a role no higher than theirs, and is theirs to
// list and revoke; admins see and revoke every key and make service keys, which have no maker.
const {
  stack,
  sql,
  orgs: [org],
} = useStack({ worker: false, orgs: ['person-keys'] });

const signedIn = async (role: 'admin' | 'member' | 'viewer') => {
  const person = await newPerson(sql, org.id, role);
  return { ...person, cookie: await signIn(stack.app, person) };
};

describe('keys made by people', () => {
  it('records the maker, who lists and revokes their own keys only', async () => {
    const ada = await signedIn('member');
    const bob = await signedIn('member');
    const made = await callAs(stack.app, ada.cookie, 'POST', '/api-keys', { role: 'member', label: 'ada-ci' });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json()).toMatchObject({ role: 'member', created_by: { id: ada.id, email: ada.email, name: ada.name } });
    const key = made.json();
    expect((await call(stack.app, key.key, 'POST', '/project', { name: `ada-${ada.id}` })).statusCode).toBe(200);

    const own = (await callAs(stack.app, ada.cookie, 'GET', '/api-keys')).json();
    expect(own.map((k: { id: string }) => k.id)).toEqual([key.id]);
    expect((await callAs(stack.app, bob.cookie, 'GET', '/api-keys')).json()).toEqual([]);
    expect((await callAs(stack.app, bob.cookie, 'DELETE', `/api-keys/${key.id}`)).statusCode).toBe(404);
    expect((await call(stack.app, key.key, 'GET', '/me')).statusCode).toBe(200);
    expect((await callAs(stack.app, ada.cookie, 'DELETE', `/api-keys/${key.id}`)).json()).toEqual({
      id: key.id,
      deleted: true,
    });
    expect((await call(stack.app, key.key, 'GET', '/me')).statusCode).toBe(401);
  });

  it('refuses a role higher than the maker’s, and service keys to all but admins', async () => {
    const viewer = await signedIn('viewer');
    const member = await signedIn('member');
    expect(
      (await callAs(stack.app, viewer.cookie, 'POST', '/api-keys', { role: 'viewer', label: 'v' })).statusCode,
    ).toBe(200);
    for (const [who, role] of [
      [viewer, 'member'],
      [viewer, 'admin'],
      [member, 'admin'],
    ] as const) {
      const res = await callAs(stack.app, who.cookie, 'POST', '/api-keys', { role, label: 'too high' });
      expect([res.statusCode, res.json().detail], `${who.email} ${role}`).toEqual([
        403,
        expect.stringMatching(/no higher than its maker/),
      ]);
    }
    const service = await callAs(stack.app, member.cookie, 'POST', '/api-keys', {
      role: 'member',
      label: 'svc',
      service: true,
    });
    expect(service.statusCode).toBe(403);
  });

  it('lets admins see every key with its maker, and make service keys, which have none', async () => {
    const admin = await signedIn('admin');
    const ada = await signedIn('member');
    const adas = (await callAs(stack.app, ada.cookie, 'POST', '/api-keys', { role: 'viewer', label: 'a' })).json();
    const service = await callAs(stack.app, admin.cookie, 'POST', '/api-keys', {
      role: 'admin',
      label: 'deploy-bot',
      service: true,
    });
    expect(service.json()).toMatchObject({ role: 'admin', created_by: null });
    const listed = (await callAs(stack.app, admin.cookie, 'GET', '/api-keys')).json() as {
      id: string;
      created_by: unknown;
    }[];
    expect(listed.find((k) => k.id === adas.id)!.created_by).toEqual({ id: ada.id, email: ada.email, name: ada.name });
    expect(listed.find((k) => k.id === service.json().id)!.created_by).toBeNull();
    // The organization's first key, made by the CLI, has no maker either.
    const { key_id } = (await call(stack.app, org.key, 'GET', '/me')).json();
    expect(listed.find((k) => k.id === key_id)!.created_by).toBeNull();
    // The admin revokes anyone's key.
    expect((await callAs(stack.app, admin.cookie, 'DELETE', `/api-keys/${adas.id}`)).statusCode).toBe(200);
  });

  it('keeps key management with keys for admin keys alone', async () => {
    const member = (await call(stack.app, org.key, 'POST', '/api-keys', { role: 'member', label: 'm' })).json();
    expect(member.created_by).toBeNull();
    for (const [method, path, body] of [
      ['GET', '/api-keys'],
      ['POST', '/api-keys', { role: 'viewer', label: 'x' }],
      ['DELETE', `/api-keys/${member.id}`],
    ] as const) {
      const res = await call(stack.app, member.key, method, path, body);
      expect([res.statusCode, res.json().detail], `${method} ${path}`).toEqual([
        403,
        "this API key's role (member) cannot manage the organization; ask an admin for more rights",
      ]);
    }
  });
});

describe('the audit log names the person', () => {
  it('records the person behind a change, and filters by person or by key', async () => {
    const admin = await signedIn('admin');
    const made = (await callAs(stack.app, admin.cookie, 'POST', '/api-keys', { role: 'viewer', label: 'x' })).json();
    await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'by key' });
    const byPerson = (await call(stack.app, org.key, 'GET', `/audit-log?actor=${admin.id}`)).json().entries;
    expect(byPerson).toEqual([
      expect.objectContaining({
        action: 'create',
        actor: { key_id: null, user_id: admin.id, label: admin.email, role: 'admin' },
        target: { kind: 'api_key', id: made.id, name: 'x' },
      }),
    ]);
    const { key_id } = (await call(stack.app, org.key, 'GET', '/me')).json();
    const byKey = (await call(stack.app, org.key, 'GET', `/audit-log?actor=${key_id}`)).json().entries;
    expect(byKey.length).toBeGreaterThan(0);
    expect(
      byKey.every(
        (e: { actor: { key_id: string; user_id: null } }) => e.actor.key_id === key_id && e.actor.user_id === null,
      ),
    ).toBe(true);
  });
});
