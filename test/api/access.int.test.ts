import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { callAs, newPerson, signIn } from '../support/people';
import { runScript } from '../support/processes';
import { databaseUrl, newOrganization } from '../support/services';

const {
  stack,
  sql,
  orgs: [admin],
} = useStack({ worker: false, orgs: ['access'] });

async function createKey(role: string, label: string, by = admin.key) {
  const res = await call(stack.app, by, 'POST', '/api-keys', { role, label });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string; key: string; role: string; label: string; api_key: string };
}

/** The routes under /api/svc/v1 that change data or manage the organization, from the OpenAPI document. */
function writeRoutes(): { method: 'POST' | 'PUT' | 'DELETE'; path: string }[] {
  // POST routes that only read: the clients' listing calls send their filters in a body.
  const reads = new Set([
    'POST /get_trace_logs',
    'POST /traces',
    'POST /traces/count',
    'POST /traces/export',
    'POST /dashboard',
    'POST /trace-groups',
    'POST /trace-group',
    'POST /experiments',
    'POST /experiment/{experiment_uuid}/trace_logs',
    'POST /experiments/summaries',
    'POST /experiment/{experiment_uuid}/samples',
    'POST /experiments/compare',
    'POST /experiments/compare/rows',
    'POST /deployed-prompt',
    'POST /eval-rules/preview',
    'POST /monitors/preview',
  ]);
  const paths = (stack.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
  return (
    Object.entries(paths)
      // Signing in, out, and a person's own password and organization: before any role, or open to every role.
      .filter(([path]) => path.startsWith('/api/svc/v1/') && !path.startsWith('/api/svc/v1/auth/'))
      .flatMap(([path, methods]) =>
        Object.keys(methods).map((m) => ({ method: m.toUpperCase(), path: path.slice('/api/svc/v1'.length) })),
      )
      .filter(
        (r): r is { method: 'POST' | 'PUT' | 'DELETE'; path: string } =>
          r.method !== 'GET' && !reads.has(`${r.method} ${r.path}`),
      )
  );
}
// Path parameters filled with values of the right shape, so that only the role can refuse the request.
const concrete = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    /uuid|^id$/.test(name) ? crypto.randomUUID() : name.endsWith('_id') ? '1' : 'x',
  );

describe('who the caller is', () => {
  it('GET /me answers the organization, role and label of the key', async () => {
    const res = await call(stack.app, admin.key, 'GET', '/me');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      organization_id: admin.id,
      organization_name: expect.stringMatching(/^access-/),
      role: 'admin',
      label: null,
    });
    const viewer = await createKey('viewer', 'vera@example.com');
    expect((await call(stack.app, viewer.key, 'GET', '/me')).json()).toMatchObject({
      organization_id: admin.id,
      role: 'viewer',
      label: 'vera@example.com',
      key_id: viewer.id,
    });
  });
});

describe('API keys (admins)', () => {
  it('creates a key shown once, then lists it by its last 4 characters with its role, label and last use', async () => {
    const made = await createKey('member', 'ada@example.com');
    expect(made).toMatchObject({ role: 'member', label: 'ada@example.com', api_key: `...${made.key.slice(-4)}` });
    expect((await call(stack.app, made.key, 'POST', '/project', { name: 'by-ada' })).statusCode).toBe(200);
    const listed = (await call(stack.app, admin.key, 'GET', '/api-keys')).json() as Record<string, unknown>[];
    expect(JSON.stringify(listed)).not.toContain(made.key);
    expect(listed.find((k) => k.id === made.id)).toMatchObject({
      role: 'member',
      label: 'ada@example.com',
      api_key: `...${made.key.slice(-4)}`,
      last_used_at: expect.any(String),
    });
    expect(Object.keys(listed[0]).sort()).toEqual([
      'api_key',
      'created_at',
      'created_by',
      'id',
      'label',
      'last_used_at',
      'role',
    ]);
  });
  it('answers 422 for an unknown role or no label', async () => {
    for (const body of [{ role: 'owner', label: 'x' }, { role: 'member' }, { role: 'member', label: '' }]) {
      expect((await call(stack.app, admin.key, 'POST', '/api-keys', body)).statusCode, JSON.stringify(body)).toBe(422);
    }
  });
  it('revokes a key: refused at once, 404 for another organization, never the last admin key', async () => {
    const made = await createKey('member', 'leaving@example.com');
    expect((await call(stack.app, made.key, 'GET', '/me')).statusCode).toBe(200);
    const other = await newOrganization(sql, 'other');
    expect((await call(stack.app, other.key, 'DELETE', `/api-keys/${made.id}`)).statusCode).toBe(404);
    expect((await call(stack.app, made.key, 'GET', '/me')).statusCode).toBe(200);
    const revoked = await call(stack.app, admin.key, 'DELETE', `/api-keys/${made.id}`);
    expect(revoked.json()).toEqual({ id: made.id, deleted: true });
    expect((await call(stack.app, made.key, 'GET', '/me')).statusCode).toBe(401);
    expect((await call(stack.app, admin.key, 'DELETE', `/api-keys/${made.id}`)).statusCode).toBe(404);

    const { key_id } = (await call(stack.app, other.key, 'GET', '/me')).json();
    const last = await call(stack.app, other.key, 'DELETE', `/api-keys/${key_id}`);
    expect(last.statusCode).toBe(409);
    expect(last.json().detail).toMatch(/last admin key/);
    expect((await call(stack.app, other.key, 'GET', '/me')).statusCode).toBe(200);
  });
});

describe('roles', () => {
  it('a viewer reads, and every write route answers it 403 {detail}', async () => {
    const viewer = await createKey('viewer', 'viewer@example.com');
    const routes = writeRoutes();
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const res = await call(
        stack.app,
        viewer.key,
        route.method,
        concrete(route.path),
        route.method === 'DELETE' ? undefined : {},
      );
      expect(res.statusCode, `${route.method} ${route.path}`).toBe(403);
      const message = expect.stringMatching(/role \(viewer\)/);
      // The OTLP intake answers its errors with OTLP's google.rpc.Status (7: PERMISSION_DENIED).
      expect(res.json()).toEqual(route.path.endsWith('/v1/traces') ? { code: 7, message } : { detail: message });
    }
    const listing = await call(stack.app, viewer.key, 'POST', '/get_trace_logs', { project_name: 'default' });
    expect(listing.statusCode).toBe(200);
    expect((await call(stack.app, viewer.key, 'POST', '/experiments', {})).statusCode).toBe(200);
    // The audit log is an admin's read.
    expect((await call(stack.app, viewer.key, 'GET', '/audit-log')).statusCode).toBe(403);
  });
  it('a member writes data but cannot manage keys or provider keys, nor read the audit log', async () => {
    const member = await createKey('member', 'member@example.com');
    expect(
      (await call(stack.app, member.key, 'POST', '/trace_log', { project_name: 'by-member', trace_name: 't' }))
        .statusCode,
    ).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/api-keys'],
      ['POST', '/api-keys', { role: 'admin', label: 'me' }],
      ['GET', '/provider-keys'],
      ['POST', '/provider-keys', { provider: 'openai', api_key: 'sk-x' }],
      ['GET', '/audit-log'],
      ['POST', '/budgets', { scope: { kind: 'organization' }, limit_usd: 1, period: 'day', action: 'block' }],
    ] as const) {
      const res = await call(stack.app, member.key, method, path, body);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
    }
  });
});

/** The routes that manage the organization's people: admins alone, whether by key or signed in. */
const PEOPLE_ADMIN_ROUTES = [
  ['GET', '/invitations'],
  ['POST', '/invitations', { email: 'someone@example.com', role: 'viewer' }],
  ['DELETE', `/invitations/${crypto.randomUUID()}`],
  ['PATCH', `/users/${crypto.randomUUID()}`, { role: 'admin' }],
  ['DELETE', `/users/${crypto.randomUUID()}`],
  ['DELETE', `/users/${crypto.randomUUID()}/sessions`],
  ['GET', '/audit-log'],
] as const;

describe('roles of people signed in', () => {
  it("a viewer's session: every write route answers 403 {detail}, but for making and revoking their own keys", async () => {
    const cookie = await signIn(stack.app, await newPerson(sql, admin.id, 'viewer'));
    const own = new Set(['POST /api-keys', 'DELETE /api-keys/{id}']);
    const routes = writeRoutes().filter((r) => !own.has(`${r.method} ${r.path}`));
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const res = await callAs(
        stack.app,
        cookie,
        route.method,
        concrete(route.path),
        route.method === 'DELETE' ? undefined : {},
      );
      expect(res.statusCode, `${route.method} ${route.path}`).toBe(403);
      const message = expect.stringMatching(/^your role \(viewer\)/);
      expect(res.json()).toEqual(route.path.endsWith('/v1/traces') ? { code: 7, message } : { detail: message });
    }
    expect((await callAs(stack.app, cookie, 'GET', '/users')).statusCode).toBe(200);
  });

  it('members, signed in or by key, cannot manage people nor read the audit log', async () => {
    const cookie = await signIn(stack.app, await newPerson(sql, admin.id, 'member'));
    const member = await createKey('member', 'member-key@example.com');
    for (const [method, path, body] of PEOPLE_ADMIN_ROUTES) {
      const bySession = await callAs(stack.app, cookie, method, path, body);
      expect([bySession.statusCode, bySession.json().detail], `${method} ${path}`).toEqual([
        403,
        'your role (member) cannot manage the organization; ask an admin for more rights',
      ]);
      expect((await call(stack.app, member.key, method, path, body)).statusCode, `${method} ${path}`).toBe(403);
    }
    expect((await callAs(stack.app, cookie, 'GET', '/users')).statusCode).toBe(200);
  });
});

describe('npm run apikey', () => {
  it('creates a key with the role and label given, and refuses an unknown role', async () => {
    const org = `cli-${crypto.randomUUID().slice(0, 8)}`;
    const made = await runScript(
      'scripts/apikey.ts',
      ['create', '--org', org, '--role', 'viewer', '--label', 'ci@example.com'],
      { DATABASE_URL: databaseUrl() },
    );
    expect(made.code, made.stderr).toBe(0);
    const key = made.stdout.trim().split('\n').at(-1)!;
    expect((await call(stack.app, key, 'GET', '/me')).json()).toMatchObject({
      organization_name: org,
      role: 'viewer',
      label: 'ci@example.com',
    });
    const refused = await runScript('scripts/apikey.ts', ['create', '--org', org, '--role', 'owner'], {
      DATABASE_URL: databaseUrl(),
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--role admin\|member\|viewer/);
  });
});
