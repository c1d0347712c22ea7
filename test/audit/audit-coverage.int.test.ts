import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditTargetKind } from '@sightline/schemas';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { newPerson } from '../support/people';

// Every writing route of the OpenAPI document (every method but GET) either records its change in the
// audit log, called here with a valid request and checked for an entry about its kind of target, or is
// exempt with its reason: not a change to the organization's configuration. A route added later in
// neither list fails this test until it is one or the other.

const {
  stack,
  sql,
  orgs: [org],
} = useStack({ worker: false, env: { SECRETS_KEY: randomBytes(32).toString('hex') }, orgs: ['audit-walk'] });
const PROJECT = `walked-${randomUUID().slice(0, 8)}`;
const METRIC = `walked-metric-${randomUUID().slice(0, 8)}`;

type Method = 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
async function ok(method: Method, path: string, body?: unknown) {
  const res = await call(stack.app, org.key, method, path, body);
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeLessThan(300);
  return res.json();
}
const post = (path: string, body: unknown) => ok('POST', path, body);

// What the requests below make their targets of.
const made = {
  apiKey: () => post('/api-keys', { role: 'member', label: unique('walker') }),
  criterion: () => post('/annotation-criteria', { name: unique('criterion'), kind: 'value' }),
  providerKey: () => post('/provider-keys', { provider: unique('llm'), api_key: 'sk-walk-0000' }),
  route: () =>
    post('/routes', { name: unique('route'), strategy: 'fallback', targets: [{ provider: 'openai', model: 'm' }] }),
  dataset: () => post('/collection', { name: unique('dataset'), column_names: ['q'], test_cases: [] }),
  promptVersion: () =>
    post('/prompts', {
      name: unique('prompt'),
      model: 'm',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi' }],
    }),
  metric: () => post('/eval-metrics', { name: unique('metric'), type: 'exact_match' }),
  rule: () =>
    post('/eval-rules', { name: unique('rule'), project_name: PROJECT, metric_names: [METRIC], enabled: false }),
  queue: () => post('/annotation-queues', { name: unique('queue'), project_name: PROJECT }),
  monitor: () =>
    post('/monitors', {
      name: unique('monitor'),
      project_name: PROJECT,
      metric: 'error_rate',
      window_minutes: 5,
      condition: { above: 0.5 },
      enabled: false,
    }),
  budget: () => post('/budgets', { scope: { kind: 'organization' }, limit_usd: 10, period: 'month', action: 'alert' }),
  invitation: () => post('/invitations', { email: `${unique('invited')}@example.com`, role: 'viewer' }),
  member: () => newPerson(sql, org.id, 'member'),
};
const BACKFILL_RANGE = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };

type Request = { path: string; body?: unknown };
/**
 * The routes that record their change: the kind of target they record, and a valid request (its targets
 * made first). Keyed `METHOD /path` as the OpenAPI document names them, without the /api/svc/v1 prefix.
 */
const AUDITED: Record<string, { kind: AuditTargetKind; request: () => Promise<Request> }> = {
  'POST /api-keys': {
    kind: 'api_key',
    request: async () => ({ path: '/api-keys', body: { role: 'viewer', label: 'w' } }),
  },
  'DELETE /api-keys/{id}': {
    kind: 'api_key',
    request: async () => ({ path: `/api-keys/${(await made.apiKey()).id}` }),
  },
  'POST /invitations': {
    kind: 'invitation',
    request: async () => ({
      path: '/invitations',
      body: { email: `${unique('invited')}@example.com`, role: 'member' },
    }),
  },
  'DELETE /invitations/{id}': {
    kind: 'invitation',
    request: async () => ({ path: `/invitations/${(await made.invitation()).id}` }),
  },
  'PATCH /users/{id}': {
    kind: 'user',
    request: async () => ({ path: `/users/${(await made.member()).id}`, body: { role: 'viewer' } }),
  },
  'DELETE /users/{id}': { kind: 'user', request: async () => ({ path: `/users/${(await made.member()).id}` }) },
  'DELETE /users/{id}/sessions': {
    kind: 'user',
    request: async () => ({ path: `/users/${(await made.member()).id}/sessions` }),
  },
  'POST /provider-keys': {
    kind: 'provider_key',
    request: async () => ({ path: '/provider-keys', body: { provider: unique('llm'), api_key: 'sk-walk-1111' } }),
  },
  'DELETE /provider-keys/{provider}': {
    kind: 'provider_key',
    request: async () => ({ path: `/provider-keys/${(await made.providerKey()).provider}` }),
  },
  'POST /annotation-criteria': {
    kind: 'annotation_criterion',
    request: async () => ({ path: '/annotation-criteria', body: { name: unique('criterion'), kind: 'score' } }),
  },
  'PATCH /annotation-criteria/{id}': {
    kind: 'annotation_criterion',
    request: async () => ({
      path: `/annotation-criteria/${(await made.criterion()).id}`,
      body: { eval_metric_name: METRIC },
    }),
  },
  'DELETE /annotation-criteria/{id}': {
    kind: 'annotation_criterion',
    request: async () => ({ path: `/annotation-criteria/${(await made.criterion()).id}` }),
  },
  'POST /routes': {
    kind: 'route',
    request: async () => ({
      path: '/routes',
      body: { name: unique('route'), strategy: 'loadbalance', targets: [{ provider: 'openai', model: 'm' }] },
    }),
  },
  'DELETE /routes/{name}': { kind: 'route', request: async () => ({ path: `/routes/${(await made.route()).name}` }) },
  'POST /project': { kind: 'project', request: async () => ({ path: '/project', body: { name: unique('project') } }) },
  'POST /prompts': {
    kind: 'prompt',
    request: async () => ({
      path: '/prompts',
      body: { name: unique('prompt'), model: 'm', provider: 'openai', messages: [{ role: 'user', content: 'hi' }] },
    }),
  },
  'POST /deployments': {
    kind: 'prompt_deployment',
    request: async () => ({
      path: '/deployments',
      body: { prompt_version_id: (await made.promptVersion()).id, deployment_id: unique('deployment') },
    }),
  },
  'POST /collection': {
    kind: 'dataset',
    request: async () => ({
      path: '/collection',
      body: { name: unique('dataset'), column_names: ['q'], test_cases: [{ inputs: { q: 'x' } }] },
    }),
  },
  // A dataset named for the first time is created.
  'POST /testcases': {
    kind: 'dataset',
    request: async () => ({
      path: '/testcases',
      body: { name: unique('dataset'), test_cases: [{ inputs: { q: 'x' } }] },
    }),
  },
  'PATCH /datasets/{dataset_id}': {
    kind: 'dataset',
    request: async () => ({ path: `/datasets/${(await made.dataset()).id}`, body: { name: unique('renamed') } }),
  },
  'DELETE /datasets/{dataset_id}': {
    kind: 'dataset',
    request: async () => ({ path: `/datasets/${(await made.dataset()).id}` }),
  },
  'POST /datasets/{dataset_id}/import': {
    kind: 'dataset',
    request: async () => ({
      path: `/datasets/${(await made.dataset()).id}/import`,
      body: { format: 'jsonl', content: '{"inputs":{"q":"x"}}' },
    }),
  },
  'POST /eval-metrics': {
    kind: 'eval_metric',
    request: async () => ({ path: '/eval-metrics', body: { name: unique('metric'), type: 'json_valid' } }),
  },
  'DELETE /eval-metrics/{id}': {
    kind: 'eval_metric',
    request: async () => ({ path: `/eval-metrics/${(await made.metric()).id}` }),
  },
  'PATCH /eval-metrics/{id}': {
    kind: 'eval_metric',
    request: async () => ({
      path: `/eval-metrics/${(await made.metric()).id}`,
      body: { type: 'exact_match', config: { case_sensitive: false } },
    }),
  },
  'POST /eval-rules': {
    kind: 'eval_rule',
    request: async () => ({
      path: '/eval-rules',
      body: { name: unique('rule'), project_name: PROJECT, metric_names: [METRIC], enabled: false },
    }),
  },
  'PATCH /eval-rules/{id}': {
    kind: 'eval_rule',
    request: async () => ({ path: `/eval-rules/${(await made.rule()).id}`, body: { sample_rate: 0.5 } }),
  },
  'DELETE /eval-rules/{id}': {
    kind: 'eval_rule',
    request: async () => ({ path: `/eval-rules/${(await made.rule()).id}` }),
  },
  'POST /eval-rules/{id}/backfill': {
    kind: 'eval_rule',
    request: async () => ({ path: `/eval-rules/${(await made.rule()).id}/backfill`, body: BACKFILL_RANGE }),
  },
  // No worker runs here: the backfill is still running when it is cancelled.
  'POST /eval-rules/{id}/backfills/{backfill_id}/cancel': {
    kind: 'eval_rule',
    request: async () => {
      const rule = await made.rule();
      const backfill = await post(`/eval-rules/${rule.id}/backfill`, BACKFILL_RANGE);
      return { path: `/eval-rules/${rule.id}/backfills/${backfill.id}/cancel` };
    },
  },
  'POST /annotation-queues': {
    kind: 'annotation_queue',
    request: async () => ({ path: '/annotation-queues', body: { name: unique('queue'), project_name: PROJECT } }),
  },
  'PATCH /annotation-queues/{id}': {
    kind: 'annotation_queue',
    request: async () => ({ path: `/annotation-queues/${(await made.queue()).id}`, body: { instructions: 'read' } }),
  },
  'DELETE /annotation-queues/{id}': {
    kind: 'annotation_queue',
    request: async () => ({ path: `/annotation-queues/${(await made.queue()).id}` }),
  },
  'POST /monitors': {
    kind: 'monitor',
    request: async () => ({
      path: '/monitors',
      body: {
        name: unique('monitor'),
        project_name: PROJECT,
        metric: 'trace_count',
        window_minutes: 5,
        condition: { below: 1 },
      },
    }),
  },
  'PATCH /monitors/{id}': {
    kind: 'monitor',
    request: async () => ({ path: `/monitors/${(await made.monitor()).id}`, body: { window_minutes: 10 } }),
  },
  'DELETE /monitors/{id}': {
    kind: 'monitor',
    request: async () => ({ path: `/monitors/${(await made.monitor()).id}` }),
  },
  'POST /budgets': {
    kind: 'budget',
    request: async () => ({
      path: '/budgets',
      body: { scope: { kind: 'project', project_name: PROJECT }, limit_usd: 5, period: 'day', action: 'block' },
    }),
  },
  'PATCH /budgets/{id}': {
    kind: 'budget',
    request: async () => ({ path: `/budgets/${(await made.budget()).id}`, body: { limit_usd: 20 } }),
  },
  'DELETE /budgets/{id}': {
    kind: 'budget',
    request: async () => ({ path: `/budgets/${(await made.budget()).id}` }),
  },
};

const READ = 'a read: its query is sent as a body';
const SPANS = "the application's traces and spans: data the service observes, not configuration";
const REMARKS = "people's remarks on spans: data about traces, not configuration";
const REVIEW = "a reviewer's work through a queue's items, not the queue's settings";

/** The writing routes that change no configuration, each with why it records nothing. */
const SIGN_IN = "a person's own session or password, not the organization's configuration";
const EXEMPT: Record<string, string> = {
  'POST /auth/login': SIGN_IN,
  'POST /auth/key': SIGN_IN,
  'POST /auth/logout': SIGN_IN,
  'POST /auth/password': SIGN_IN,
  'POST /auth/organization': SIGN_IN,
  'POST /auth/bootstrap':
    "a new server's first person, before any organization has people: made once, from the console's sign-in page",
  'POST /auth/accept-invitation':
    "public: no key or session to call it with here; the person's joining is recorded as the invitation's accept (test/auth/invitations)",
  'POST /get_trace_logs': READ,
  'POST /traces': READ,
  'POST /traces/count': READ,
  'POST /traces/export': READ,
  'POST /dashboard': READ,
  'POST /trace-groups': READ,
  'POST /trace-group': READ,
  'POST /experiments': READ,
  'POST /experiments/summaries': READ,
  'POST /experiment/{experiment_uuid}/trace_logs': READ,
  'POST /experiment/{experiment_uuid}/samples': READ,
  'POST /experiments/compare': READ,
  'POST /experiments/compare/rows': READ,
  'POST /eval-rules/preview': `${READ} (what a rule would evaluate, before it is saved)`,
  'POST /monitors/preview': `${READ} (what a monitor would have measured, before it is saved)`,
  'POST /deployed-prompt': `${READ} (a deployed prompt, filled with inputs)`,
  'POST /eval-metrics/try': 'scores an output with a metric without saving anything',
  'POST /trace_log': SPANS,
  'PUT /trace_log': SPANS,
  'POST /trace_logs/batch': SPANS,
  'POST /trace_log/chainlib': SPANS,
  'POST /otel/v1/traces': SPANS,
  '/v1/traces POST': SPANS,
  'POST /feedback': "end users' feedback on traces: data",
  'POST /completion': 'a model call through the gateway: its trace is data',
  'POST /completion/stream': 'a model call through the gateway: its trace is data',
  'POST /experiment': "an experiment's run: results, not configuration",
  'POST /experiment/{experiment_uuid}/finished': "an experiment's run: results, not configuration",
  'POST /update_test_case/{dataset_id}/{test_case_id}':
    "a dataset's test cases are its data; its creation, renaming, import and deletion are recorded",
  'DELETE /datasets/{dataset_id}/test_cases/{test_case_id}':
    "a dataset's test cases are its data; its creation, renaming, import and deletion are recorded",
  'POST /trace_log/{trace_id}/comments': REMARKS,
  'DELETE /trace_log/{trace_id}/comments/{comment_id}': REMARKS,
  'PUT /trace_log/{trace_id}/annotations/{criterion_id}': REMARKS,
  'DELETE /trace_log/{trace_id}/annotations/{criterion_id}': REMARKS,
  'POST /annotation-queues/{id}/items': "traces brought to a queue for review: the queue's work, not its settings",
  'POST /annotation-queues/{id}/next': REVIEW,
  'POST /annotation-queues/{id}/items/{item_id}/lease': REVIEW,
  'POST /annotation-queues/{id}/items/{item_id}/complete': REVIEW,
  'POST /annotation-queues/{id}/items/{item_id}/skip': REVIEW,
};

/** Every route of the OpenAPI document but its reads: `METHOD /path` under /api/svc/v1, `/path METHOD` elsewhere. */
function writingRoutes(): string[] {
  const paths = (stack.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .filter((m) => m !== 'get' && m !== 'head')
      .map((m) =>
        path.startsWith('/api/svc/v1/')
          ? `${m.toUpperCase()} ${path.slice('/api/svc/v1'.length)}`
          : `${path} ${m.toUpperCase()}`,
      ),
  );
}

const entriesAbout = async (kind: AuditTargetKind) =>
  (
    await sql<{ n: number }[]>`
      select count(*)::int as n from audit_log where organization_id = ${org.id} and target_kind = ${kind}`
  )[0].n;

beforeAll(async () => {
  await post('/project', { name: PROJECT });
  await post('/eval-metrics', { name: METRIC, type: 'exact_match' });
});

describe('the audit log covers every writing route', () => {
  it('lists each writing route of the API as audited or exempt, and no route the API does not have', () => {
    const routes = writingRoutes();
    expect(routes.length).toBeGreaterThan(50);
    expect(
      routes.filter((r) => !(r in AUDITED) && !(r in EXEMPT)),
      'writing routes that are neither audited nor exempt: record their change with recordChange ' +
        '(apps/api/src/services/audit.ts) and add them to AUDITED, or add them to EXEMPT with the reason',
    ).toEqual([]);
    expect([...Object.keys(AUDITED), ...Object.keys(EXEMPT)].filter((r) => !routes.includes(r))).toEqual([]);
    expect(Object.keys(AUDITED).filter((r) => r in EXEMPT)).toEqual([]);
  });

  it('records an entry about its kind of target for each audited route, called with a valid request', async () => {
    const silent: string[] = [];
    for (const route of writingRoutes().filter((r) => r in AUDITED)) {
      const { kind, request } = AUDITED[route];
      const { path, body } = await request();
      const before = await entriesAbout(kind);
      await ok(route.split(' ')[0] as Method, path, body);
      if ((await entriesAbout(kind)) <= before) silent.push(route);
    }
    expect(silent, 'audited routes that recorded nothing').toEqual([]);
  });
});
