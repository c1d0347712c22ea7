import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

// GET /deployments/{id}/history: a deployment's moves as the audit log recorded them, readable by every
// role of the organization that owns it, and by no other organization.

const {
  stack,
  orgs: [org, other],
} = useStack({ worker: false, orgs: ['history', 'history-other'] });

type Method = 'GET' | 'POST';
async function ok(method: Method, path: string, body?: unknown, key = org.key) {
  const res = await call(stack.app, key, method, path, body);
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
  return res.json();
}
const version = (name: string, key = org.key) =>
  ok(
    'POST',
    '/prompts',
    { name, messages: [{ role: 'user', content: 'hi' }], model: 'gpt-4o-mini', provider: 'openai' },
    key,
  );
const deploy = (prompt_version_id: number, deployment_id: string, key = org.key) =>
  ok('POST', '/deployments', { prompt_version_id, deployment_id }, key);
const history = (id: string, key = org.key) => call(stack.app, key, 'GET', `/deployments/${id}/history`);

const PROMPT = `support-${randomUUID().slice(0, 8)}`;
const DEPLOYMENT = `production-${randomUUID().slice(0, 8)}`;
let member: { key: string };
let viewer: { key: string };
let v1: { id: number }, v2: { id: number };

beforeAll(async () => {
  member = await ok('POST', '/api-keys', { role: 'member', label: 'mia@example.com' });
  viewer = await ok('POST', '/api-keys', { role: 'viewer', label: 'vic@example.com' });
  v1 = await version(PROMPT);
  v2 = await version(PROMPT);
  await deploy(v1.id, DEPLOYMENT); // by the admin, whose key has no label
  await deploy(v2.id, DEPLOYMENT, member.key);
  await deploy(v1.id, DEPLOYMENT, member.key); // the roll back
});

describe("a deployment's history", () => {
  it('lists each move newest first: the versions it moved from and to, who moved it and when', async () => {
    const res = await history(DEPLOYMENT);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const ref = (v: { id: number }, n: number) => ({ id: v.id, name: PROMPT, version_number: n });
    expect(body.deployment_id).toBe(DEPLOYMENT);
    expect(body.moves.map((m: any) => ({ by: m.by, from: m.from, to: m.to }))).toEqual([
      { by: { label: 'mia@example.com', role: 'member' }, from: ref(v2, 2), to: ref(v1, 1) },
      { by: { label: 'mia@example.com', role: 'member' }, from: ref(v1, 1), to: ref(v2, 2) },
      { by: { label: null, role: 'admin' }, from: null, to: ref(v1, 1) },
    ]);
    const times = body.moves.map((m: any) => Date.parse(m.at));
    expect(times.every(Number.isFinite)).toBe(true);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // Who moved it is named by label and role: no key id, hash or key reaches a viewer.
    expect(JSON.stringify(body)).not.toMatch(/key_id|key_hash|sl_/);
  });

  it('is readable by every role: a viewer reads it but cannot move the deployment', async () => {
    for (const key of [member.key, viewer.key]) {
      const res = await history(DEPLOYMENT, key);
      expect(res.statusCode).toBe(200);
      expect(res.json().moves).toHaveLength(3);
    }
    const moved = await call(stack.app, viewer.key, 'POST', '/deployments', {
      prompt_version_id: v2.id,
      deployment_id: DEPLOYMENT,
    });
    expect(moved.statusCode).toBe(403);
    expect((await history(DEPLOYMENT)).json().moves).toHaveLength(3);
  });

  it('answers 404 for a deployment the organization does not have, and 401 without a key', async () => {
    const unknown = await history(`nowhere-${randomUUID().slice(0, 8)}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: 'deployment not found' });
    expect((await call(stack.app, null, 'GET', `/deployments/${DEPLOYMENT}/history`)).statusCode).toBe(401);
    // A NUL from the URL is text PostgreSQL cannot hold: it names no deployment, like any other id.
    expect((await history('a%00b')).statusCode).toBe(404);
  });

  it("keeps organizations apart: another one's deployment is not found, one of the same id is its own", async () => {
    expect((await history(DEPLOYMENT, other.key)).statusCode).toBe(404);

    const theirs = await version(PROMPT, other.key);
    await deploy(theirs.id, DEPLOYMENT, other.key);
    const mine = (await history(DEPLOYMENT)).json();
    const their = (await history(DEPLOYMENT, other.key)).json();
    expect(their.moves).toEqual([
      expect.objectContaining({ from: null, to: { id: theirs.id, name: PROMPT, version_number: 1 } }),
    ]);
    expect(mine.moves).toHaveLength(3);
  });
});
