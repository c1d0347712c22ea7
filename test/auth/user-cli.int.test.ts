import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useStack } from '../support/fixtures';
import { callAs, newPerson, signIn } from '../support/people';
import { runScript } from '../support/processes';
import { databaseUrl } from '../support/services';

// `npm run user -- create ...`: the first admin of an organization, from a shell.
const {
  stack,
  sql,
  orgs: [org],
} = useStack({ worker: false, orgs: ['user-cli'] });

const user = (...args: string[]) => runScript('scripts/user.ts', args, { DATABASE_URL: databaseUrl() });
const tag = () => randomBytes(4).toString('hex');

describe('npm run user', () => {
  it('creates the organization and an admin with a one-time password, replaced at the first sign-in', async () => {
    const orgName = `cli-${tag()}`;
    const email = `first-${tag()}@example.com`;
    const made = await user('create', '--org', orgName, '--email', email, '--role', 'admin', '--name', 'First Admin');
    expect(made.code, made.stderr).toBe(0);
    const password = made.stdout.trim().split('\n').at(-1)!;
    expect(password).toMatch(/^[\w-]{16}$/);
    const cookie = await signIn(stack.app, { email, password });
    expect((await callAs(stack.app, cookie, 'GET', '/me')).json()).toMatchObject({
      organization_name: orgName,
      role: 'admin',
      user: { email, name: 'First Admin' },
      must_change_password: true,
    });
    expect((await callAs(stack.app, cookie, 'GET', '/users')).statusCode).toBe(403);
    const changed = await callAs(stack.app, cookie, 'POST', '/auth/password', {
      current_password: password,
      new_password: 'my own long password',
    });
    expect(changed.statusCode).toBe(200);
    expect((await callAs(stack.app, cookie, 'GET', '/users')).json()).toEqual([
      expect.objectContaining({ email, role: 'admin' }),
    ]);
  }, 60_000);

  it('takes the password given, and adds an existing person to another organization without touching theirs', async () => {
    const email = `given-${tag()}@example.com`;
    const orgName = `cli-${tag()}`;
    const made = await user(
      'create',
      '--org',
      orgName,
      '--email',
      email,
      '--role',
      'member',
      '--password',
      'a given long password',
    );
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).not.toContain('a given long password');
    const cookie = await signIn(stack.app, { email, password: 'a given long password' });
    expect((await callAs(stack.app, cookie, 'GET', '/me')).json()).toMatchObject({
      role: 'member',
      must_change_password: false,
      user: { name: email.split('@')[0] },
    });

    const ada = await newPerson(sql, org.id, 'viewer');
    const joined = await user('create', '--org', orgName, '--email', ada.email.toUpperCase(), '--role', 'viewer');
    expect(joined.code, joined.stderr).toBe(0);
    expect(joined.stdout).toMatch(/keeps its password/);
    const me = (await callAs(stack.app, await signIn(stack.app, ada), 'GET', '/me')).json();
    expect(me.organizations.map((o: { name: string }) => o.name).sort()).toEqual(
      [orgName, me.organizations.find((o: { id: string }) => o.id === org.id).name].sort(),
    );
  }, 60_000);

  it('refuses bad input with a plain message and exit code 1', async () => {
    const ok = ['create', '--org', `cli-${tag()}`, '--email', `x-${tag()}@example.com`, '--role', 'admin'];
    const cases = [
      [ok.map((a) => (a === 'admin' ? 'owner' : a)), /--role must be admin, member or viewer/],
      [ok.map((a) => (a.includes('@') ? 'not-an-email' : a)), /--email must be an email address, not "not-an-email"/],
      [[...ok, '--password', 'short'], /--password must be at least 12 characters/],
      [ok.filter((_, i) => i !== 1 && i !== 2), /--org <name> is required/],
      [[...ok, '--colour', 'blue'], /Unknown option '--colour'/],
      [['delete', ...ok.slice(1)], /the command is `create`/],
    ] as const;
    // Each run starts a process (tsx): side by side.
    const results = await Promise.all(cases.map(([args]) => user(...args)));
    for (const [i, res] of results.entries()) {
      const [args, message] = cases[i];
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).toMatch(/usage: npm run user -- create --org <name> --email <email>/);
      expect(res.stderr).not.toMatch(/at .*\.ts:\d+/);
    }
  }, 120_000);
});
