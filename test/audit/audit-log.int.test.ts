import { createHash, randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, recordAudit, transaction } from '@sightline/db';
import { retentionProcessor } from '../../apps/worker/src/processors/retention.processor';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

// The audit log through the API: what each change records, that no secret reaches it, that it is written
// in the change's transaction (a refused or failed change records nothing), who may read it, and that it
// is retained like traces. That every writing route records its change is audit-coverage.int.test.ts's.

const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ worker: false, env: { SECRETS_KEY: randomBytes(32).toString('hex') }, orgs: ['audit', 'audit-other'] });
const PROJECT = `audited-${randomUUID().slice(0, 8)}`;
const METRIC = `audited-metric-${randomUUID().slice(0, 8)}`;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const send = (method: Method, path: string, body?: unknown, key = org.key) => call(stack.app, key, method, path, body);
async function ok(method: Method, path: string, body?: unknown, key = org.key) {
  const res = await send(method, path, body, key);
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

type Entry = {
  id: string;
  at: string;
  actor: { key_id: string | null; user_id: string | null; label: string | null; role: string };
  action: string;
  target: { kind: string; id: string; name: string | null };
  before: any;
  after: any;
};
/** GET /audit-log with the query given, as the organization's admin. */
async function log(query = '', key = org.key): Promise<{ entries: Entry[]; next: string | null }> {
  return ok('GET', `/audit-log${query && `?${query}`}`, undefined, key);
}
/** The entries about one target, oldest first. */
const entriesOf = async (kind: string, id: string | number) =>
  (await log(`target_kind=${kind}&limit=500`)).entries.filter((e) => e.target.id === String(id)).reverse();
/** Every entry the organization has, as stored (JSON text included), for looking for what must not be there. */
const storedText = async (orgId = org.id) =>
  (await sql<{ row: string }[]>`select to_jsonb(a)::text as row from audit_log a where organization_id = ${orgId}`).map(
    (r) => r.row,
  );
const entryCount = async (orgId = org.id) =>
  (await sql<{ n: number }[]>`select count(*)::int as n from audit_log where organization_id = ${orgId}`)[0].n;

let adminKeyId: string;
let member: { id: string; key: string };
let viewer: { id: string; key: string };

beforeAll(async () => {
  adminKeyId = (await ok('GET', '/me')).key_id;
  member = await ok('POST', '/api-keys', { role: 'member', label: 'mia@example.com' });
  viewer = await ok('POST', '/api-keys', { role: 'viewer', label: 'vic@example.com' });
  await ok('POST', '/project', { name: PROJECT });
  await ok('POST', '/eval-metrics', { name: METRIC, type: 'exact_match' });
});

describe('what a change records', () => {
  it('API keys: who made one and who revoked it, by id, label, role and last characters', async () => {
    const made = await ok('POST', '/api-keys', { role: 'member', label: 'leaving@example.com' });
    await ok('DELETE', `/api-keys/${made.id}`);
    const [created, revoked] = await entriesOf('api_key', made.id);
    const recorded = { id: made.id, label: 'leaving@example.com', role: 'member', key_hint: made.key.slice(-4) };
    expect(created).toMatchObject({
      actor: { key_id: adminKeyId, user_id: null, label: null, role: 'admin' },
      action: 'create',
      target: { kind: 'api_key', id: made.id, name: 'leaving@example.com' },
      before: null,
      after: recorded,
    });
    expect(revoked).toMatchObject({ action: 'revoke', before: recorded, after: null });
    expect(Date.parse(revoked.at)).toBeGreaterThanOrEqual(Date.parse(created.at));
  });

  it("members' changes name the member", async () => {
    const rule = await ok(
      'POST',
      '/eval-rules',
      { name: `by-member-${randomUUID()}`, project_name: PROJECT, metric_names: [METRIC], enabled: false },
      member.key,
    );
    const [created] = await entriesOf('eval_rule', rule.id);
    expect(created.actor).toEqual({ key_id: member.id, user_id: null, label: 'mia@example.com', role: 'member' });
  });

  it('provider keys: saved, replaced and deleted, their key only marked as set or changed', async () => {
    const provider = `llm-${randomBytes(4).toString('hex')}`;
    await ok('POST', '/provider-keys', { provider, api_key: 'sk-first-0001' });
    await ok('POST', '/provider-keys', { provider, api_key: 'sk-second-0002', rpm: 60 });
    await ok('DELETE', `/provider-keys/${provider}`);
    const [saved, replaced, deleted] = await entriesOf('provider_key', provider);
    const limits = { max_concurrent: null, rpm: null, tpm: null };
    expect(saved).toMatchObject({
      action: 'create',
      target: { kind: 'provider_key', id: provider, name: provider },
      before: null,
      after: { provider, api_key: '<changed>', key_hint: '0001', base_url: null, ...limits },
    });
    expect(replaced).toMatchObject({
      action: 'update',
      before: { provider, api_key: '<secret>', key_hint: '0001', ...limits },
      after: { provider, api_key: '<changed>', key_hint: '0002', ...limits, rpm: 60 },
    });
    expect(deleted).toMatchObject({ action: 'delete', before: { api_key: '<secret>', key_hint: '0002' }, after: null });
  });

  it('eval rules: created, changed (before and after), backfilled, cancelled and deleted', async () => {
    const rule = await ok('POST', '/eval-rules', {
      name: `rule-${randomUUID()}`,
      project_name: PROJECT,
      metric_names: [METRIC],
      enabled: true,
    });
    await ok('PATCH', `/eval-rules/${rule.id}`, { enabled: false, sample_rate: 0.25 });
    const backfill = await ok('POST', `/eval-rules/${rule.id}/backfill`, {
      from: '2026-01-01T00:00:00Z',
      to: '2026-01-02T00:00:00Z',
    });
    await ok('POST', `/eval-rules/${rule.id}/backfills/${backfill.id}/cancel`);
    await ok('DELETE', `/eval-rules/${rule.id}`);
    const [created, changed, started, cancelled, deleted] = await entriesOf('eval_rule', rule.id);
    const settings = {
      id: rule.id,
      project_uuid: rule.project_uuid,
      name: rule.name,
      metric_names: [METRIC],
      sample_rate: 1,
      filters: [],
      target: { kind: 'root' },
      settle_seconds: 10,
      daily_cost_limit: null,
      reevaluate_on_update: false,
      enabled: true,
      annotation_queue: null,
    };
    expect(created).toMatchObject({ action: 'create', target: { kind: 'eval_rule', name: rule.name }, before: null });
    // Its settings, not its running figures.
    expect(created.after).toEqual(settings);
    expect(changed).toMatchObject({ action: 'update', before: settings });
    expect(changed.after).toEqual({ ...settings, enabled: false, sample_rate: 0.25 });
    expect(started).toMatchObject({
      action: 'backfill',
      after: { id: backfill.id, status: 'running', from: '2026-01-01 00:00:00', to: '2026-01-02 00:00:00' },
    });
    expect(cancelled).toMatchObject({
      action: 'cancel_backfill',
      before: { id: backfill.id, status: 'running' },
      after: { id: backfill.id, status: 'cancelled' },
    });
    expect(deleted).toMatchObject({
      action: 'delete',
      before: { ...settings, enabled: false, sample_rate: 0.25 },
      after: null,
    });
  });

  it('datasets: created, renamed, imported into and deleted; their test cases are not recorded', async () => {
    const name = `dataset-${randomUUID()}`;
    const made = await ok('POST', '/collection', {
      name,
      column_names: ['question'],
      test_cases: [{ inputs: { question: 'a private question' } }],
    });
    await ok('PATCH', `/datasets/${made.id}`, { name: `${name}-renamed` });
    await ok('POST', `/datasets/${made.id}/import`, { format: 'jsonl', content: '{"inputs":{"question":"q2"}}' });
    await ok('DELETE', `/datasets/${made.id}`);
    const recorded = { id: made.id, name, column_names: ['question'] };
    expect(await entriesOf('dataset', made.id)).toMatchObject([
      { action: 'create', target: { name }, before: null, after: { ...recorded, test_case_count: 1 } },
      { action: 'rename', before: recorded, after: { ...recorded, name: `${name}-renamed` } },
      { action: 'import', target: { name: `${name}-renamed` }, after: { format: 'jsonl', imported: 1 } },
      { action: 'delete', before: { name: `${name}-renamed`, test_case_count: 2 }, after: null },
    ]);
    expect((await storedText()).some((row) => row.includes('a private question'))).toBe(false);

    // A dataset that test cases made by naming it is a dataset created; adding to it again is data.
    const byName = `by-name-${randomUUID()}`;
    await ok('POST', '/testcases', { name: byName, test_cases: [{ inputs: { q: 'x' } }] });
    await ok('POST', '/testcases', { name: byName, test_cases: [{ inputs: { q: 'y' } }] });
    const entries = (await log('target_kind=dataset')).entries.filter((e) => e.target.name === byName);
    expect(entries).toMatchObject([{ action: 'create', after: { name: byName, column_names: ['q'] } }]);
  });

  it('criteria, queues, routes, prompts, deployments, metrics and projects', async () => {
    const tag = randomUUID().slice(0, 8);
    const criterion = await ok('POST', '/annotation-criteria', { name: `crit-${tag}`, kind: 'score', min: 1, max: 5 });
    await ok('PATCH', `/annotation-criteria/${criterion.id}`, { eval_metric_name: METRIC });
    await ok('DELETE', `/annotation-criteria/${criterion.id}`);
    expect(await entriesOf('annotation_criterion', criterion.id)).toMatchObject([
      { action: 'create', before: null, after: { name: `crit-${tag}`, eval_metric_name: null } },
      { action: 'update', before: { eval_metric_name: null }, after: { eval_metric_name: METRIC } },
      { action: 'delete', before: { name: `crit-${tag}` }, after: null },
    ]);

    const queue = await ok('POST', '/annotation-queues', { name: `queue-${tag}`, project_name: PROJECT });
    await ok('PATCH', `/annotation-queues/${queue.id}`, { instructions: 'look closely' });
    await ok('DELETE', `/annotation-queues/${queue.id}`);
    expect(await entriesOf('annotation_queue', queue.id)).toMatchObject([
      { action: 'create', after: { name: `queue-${tag}`, project_uuid: queue.project_uuid, instructions: '' } },
      { action: 'update', before: { instructions: '' }, after: { instructions: 'look closely' } },
      { action: 'delete', after: null },
    ]);

    const route = { name: `route-${tag}`, strategy: 'fallback', targets: [{ provider: 'openai', model: 'gpt-4o' }] };
    await ok('POST', '/routes', route);
    await ok('POST', '/routes', { ...route, strategy: 'loadbalance' });
    await ok('DELETE', `/routes/${route.name}`);
    expect(await entriesOf('route', route.name)).toMatchObject([
      { action: 'create', before: null, after: { strategy: 'fallback', targets: route.targets } },
      { action: 'update', before: { strategy: 'fallback' }, after: { strategy: 'loadbalance' } },
      { action: 'delete', before: { strategy: 'loadbalance' }, after: null },
    ]);

    const prompt = {
      name: `prompt-${tag}`,
      model: 'gpt-4o',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi' }],
    };
    const [v1, v2] = [await ok('POST', '/prompts', prompt), await ok('POST', '/prompts', prompt)];
    expect(await entriesOf('prompt', v2.id)).toMatchObject([
      { action: 'create', target: { name: `prompt-${tag} v2` }, after: { id: v2.id, messages: prompt.messages } },
    ]);
    const deployment = `deploy-${tag}`;
    await ok('POST', '/deployments', { deployment_id: deployment, prompt_version_id: v1.id });
    await ok('POST', '/deployments', { deployment_id: deployment, prompt_version_id: v2.id });
    const version = (v: { id: number; version_number: number }) => ({
      id: v.id,
      name: prompt.name,
      version_number: v.version_number,
    });
    expect(await entriesOf('prompt_deployment', deployment)).toMatchObject([
      { action: 'create', before: null, after: { deployment_id: deployment, prompt_version: version(v1) } },
      { action: 'update', before: { prompt_version: version(v1) }, after: { prompt_version: version(v2) } },
    ]);

    const metric = await ok('POST', '/eval-metrics', {
      name: `metric-${tag}`,
      type: 'contains',
      config: { value: 'x' },
    });
    await ok('DELETE', `/eval-metrics/${metric.id}`);
    expect(await entriesOf('eval_metric', metric.id)).toMatchObject([
      { action: 'create', after: { name: `metric-${tag}`, config: { value: 'x' } } },
      { action: 'delete', before: { name: `metric-${tag}` }, after: null },
    ]);

    // Getting a project that exists changes nothing.
    const project = await ok('POST', '/project', { name: `project-${tag}` });
    await ok('POST', '/project', { name: `project-${tag}` });
    expect(await entriesOf('project', project.uuid)).toMatchObject([
      { action: 'create', target: { name: `project-${tag}` }, after: { uuid: project.uuid, name: `project-${tag}` } },
    ]);
  });
});

describe('secrets', () => {
  it('are never recorded, in any form: API keys, their hashes, provider keys plain or sealed', async () => {
    const provider = `secret-${randomBytes(4).toString('hex')}`;
    const apiKey = `sk-${randomBytes(24).toString('hex')}`;
    await ok('POST', '/provider-keys', { provider, api_key: apiKey });
    const [{ sealed_key }] = await sql<{ sealed_key: string }[]>`
      select sealed_key from provider_keys where organization_id = ${org.id} and provider = ${provider}`;
    await ok('POST', '/provider-keys', { provider, api_key: `${apiKey}-2` });
    await ok('DELETE', `/provider-keys/${provider}`);
    const made = await ok('POST', '/api-keys', { role: 'viewer', label: 'secret@example.com' });
    await ok('DELETE', `/api-keys/${made.id}`);

    const hash = hashApiKey(made.key);
    const secrets = [apiKey, sealed_key, made.key, hash.toString('hex'), hash.toString('base64')];
    const stored = (await storedText()).join('\n');
    for (const secret of secrets) expect(stored).not.toContain(secret);
    expect(stored).not.toContain(createHash('sha256').update(apiKey).digest('hex'));
    expect(JSON.stringify(await log('limit=500'))).not.toContain(made.key);
  });

  it('are marked wherever they are nested, by one redaction every entry goes through', async () => {
    const channel = (secret: string) => ({ kind: 'webhook', url: 'https://example.com/hook', secret });
    const id = randomUUID();
    await transaction(sql, (tx) =>
      recordAudit(
        tx,
        org.id,
        { keyId: adminKeyId, userId: null, label: null, role: 'admin' },
        {
          action: 'update',
          target: { kind: 'monitor', id, name: 'nested' },
          before: { channels: [channel('kept-secret-1'), channel('old-secret-2')], token: null },
          after: { channels: [channel('kept-secret-1'), channel('new-secret-2'), channel('added-3')], token: 't' },
        },
      ),
    );
    const [entry] = await entriesOf('monitor', id);
    expect(entry.before).toEqual({ channels: [channel('<secret>'), channel('<secret>')], token: null });
    expect(entry.after).toEqual({
      channels: [channel('<secret>'), channel('<changed>'), channel('<changed>')],
      token: '<changed>',
    });
    expect(JSON.stringify(entry)).not.toMatch(/kept-secret|old-secret|new-secret|added-3/);
  });
});

describe('an entry and its change', () => {
  it('a refused change records nothing', async () => {
    const name = `crit-${randomUUID()}`;
    await ok('POST', '/annotation-criteria', { name, kind: 'value' });
    const before = await entryCount();
    const refused: [Method, string, unknown?][] = [
      ['POST', '/annotation-criteria', { name, kind: 'value' }], // 409: the name is taken
      ['POST', '/eval-rules', { name: 'x', project_name: PROJECT, metric_names: ['no-such-metric'] }], // 422
      ['PATCH', `/annotation-criteria/${randomUUID()}`, { eval_metric_name: null }], // 404
      ['DELETE', `/eval-rules/${randomUUID()}`], // 404
      ['POST', '/collection', { name: `dup-${name}`, column_names: ['q'], test_cases: [{ inputs: { z: 'x' } }] }], // 422
    ];
    for (const [method, path, body] of refused) {
      const res = await send(method, path, body);
      expect(res.statusCode, `${method} ${path}`).toBeGreaterThanOrEqual(400);
    }
    // The last admin key of an organization is never revoked: 409, and nothing recorded.
    const { key_id } = await ok('GET', '/me', undefined, other.key);
    expect((await send('DELETE', `/api-keys/${key_id}`, undefined, other.key)).statusCode).toBe(409);
    expect(await entryCount()).toBe(before);
    expect(await entryCount(other.id)).toBe(0);
  });

  it('rolls back with its change, and the change with it: they commit together or not at all', async () => {
    // The log refuses entries about targets named `refused-<tag>…`: a change whose entry cannot be
    // written must not be made.
    const tag = randomBytes(4).toString('hex');
    await sql.unsafe(`
      create function refuse_audit_${tag}() returns trigger language plpgsql as $$
      begin
        if new.target_name like 'refused-${tag}%' then raise exception 'audit log refused the entry'; end if;
        return new;
      end $$;
      create trigger refuse_audit_${tag} before insert on audit_log
        for each row execute function refuse_audit_${tag}()`);
    try {
      const name = `refused-${tag}`;
      expect((await send('POST', '/annotation-criteria', { name, kind: 'value' })).statusCode).toBe(500);
      expect((await ok('GET', '/annotation-criteria')).map((c: { name: string }) => c.name)).not.toContain(name);
      // A change made in its own transaction (a prompt's next version, numbered under a lock) joins the route's.
      const prompt = { name, model: 'gpt-4o', provider: 'openai', messages: [{ role: 'user', content: 'hi' }] };
      expect((await send('POST', '/prompts', prompt)).statusCode).toBe(500);
      expect(await ok('GET', `/prompts?name=${name}`)).toEqual([]);
      expect((await send('POST', '/collection', { name, column_names: ['q'], test_cases: [] })).statusCode).toBe(500);
      expect((await ok('GET', '/datasets')).results.map((d: { name: string }) => d.name)).not.toContain(name);
    } finally {
      await sql.unsafe(`drop trigger refuse_audit_${tag} on audit_log; drop function refuse_audit_${tag}()`);
    }

    // And an entry written in a transaction that then fails is gone with it.
    const id = randomUUID();
    await expect(
      transaction(sql, async (tx) => {
        await recordAudit(
          tx,
          org.id,
          { keyId: adminKeyId, userId: null, label: null, role: 'admin' },
          {
            action: 'create',
            target: { kind: 'route', id, name: id },
            after: {},
          },
        );
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await entriesOf('route', id)).toEqual([]);
  });
});

describe('reading the log', () => {
  it('is for admins: viewers and members are refused', async () => {
    for (const key of [viewer.key, member.key]) {
      const res = await send('GET', '/audit-log', undefined, key);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toMatch(/cannot manage the organization/);
    }
  });

  it("shows an organization its own entries only: none of another's, by any filter or cursor", async () => {
    const mine = await log('limit=5');
    expect(mine.entries.length).toBeGreaterThan(0);
    expect(await log('', other.key)).toEqual({ entries: [], next: null });
    expect(await log(`before=${mine.entries[0].id}`, other.key)).toEqual({ entries: [], next: null });
    expect(await log(`actor=${adminKeyId}`, other.key)).toEqual({ entries: [], next: null });
    expect(await log('target_kind=api_key', other.key)).toEqual({ entries: [], next: null });
  });

  it('pages newest first by the `next` cursor, or before a time; filters by actor and kind', async () => {
    const tag = randomUUID().slice(0, 8);
    for (const i of [1, 2, 3, 4, 5]) await ok('POST', '/project', { name: `paged-${tag}-${i}` });
    await ok('POST', '/project', { name: `paged-${tag}-by-member` }, member.key);

    const first = await log('target_kind=project&limit=2');
    expect(first.entries.map((e) => e.target.name)).toEqual([`paged-${tag}-by-member`, `paged-${tag}-5`]);
    const second = await log(`target_kind=project&limit=2&before=${first.next}`);
    expect(second.entries.map((e) => e.target.name)).toEqual([`paged-${tag}-4`, `paged-${tag}-3`]);
    const all = (await log('target_kind=project&limit=500')).entries;
    expect(all.map((e) => e.id)).toEqual([...new Set(all.map((e) => e.id))]);
    const times = all.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await log('limit=500')).next).toBeNull();

    const third = all.find((e) => e.target.name === `paged-${tag}-3`)!;
    const older = await log(`target_kind=project&limit=1&before=${encodeURIComponent(third.at)}`);
    expect(Date.parse(older.entries[0].at)).toBeLessThan(Date.parse(third.at));

    const byMember = (await log(`actor=${member.id}&limit=500`)).entries;
    expect(byMember.length).toBeGreaterThan(0);
    expect(byMember.every((e) => e.actor.key_id === member.id)).toBe(true);
    expect(byMember.map((e) => e.target.name)).toContain(`paged-${tag}-by-member`);
    expect((await log('target_kind=route&limit=500')).entries.every((e) => e.target.kind === 'route')).toBe(true);
  });

  it('answers 422 for a limit past 500, an unknown kind, or a cursor that is neither an id nor a time', async () => {
    for (const query of ['limit=501', 'limit=0', 'target_kind=spans', 'before=yesterday', 'actor=ada']) {
      const res = await send('GET', `/audit-log?${query}`);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc[0]).toBe('query');
    }
    expect((await log('limit=500')).entries.length).toBeLessThanOrEqual(500);
  });
});

describe('retention', () => {
  it('removes entries older than RETENTION_DAYS with the traces, and keeps the rest', async () => {
    const { id: orgId } = org;
    const old = await sql<{ id: string }[]>`
      insert into audit_log (organization_id, at, actor_key_id, actor_role, action, target_kind, target_id)
      select ${orgId}, now() - interval '400 days', ${adminKeyId}, 'admin', 'create', 'project', g::text
      from generate_series(1, 5) g returning id`;
    const kept = await entryCount();
    const retention = retentionProcessor({ sql, shouldStop: () => false });
    const result = await retention({ retention_days: 365, batch_size: 2 }, {} as never, pino({ level: 'silent' }));
    expect(result).toMatchObject({ auditEntries: expect.any(Number) });
    expect(await entryCount()).toBe(kept - old.length);
    const ids = old.map((r) => r.id);
    expect(await sql`select 1 from audit_log where id = any(${sql.array(ids)}::uuid[])`).toHaveLength(0);
  });
});
