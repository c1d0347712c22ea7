import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';
import { drainQueues } from '../support/queues';
import { checksums, missingRows, seedTenant, tenantRows, type Tenant, type TenantRows } from './tenant';

// Organization B sends organization A's ids to every endpoint. B must learn nothing of A's data (404, null
// or empty, as the protocol says for an unknown id) and change none of it. Endpoints that accept writes
// ahead of the span's create (PUT /trace_log, /feedback, /trace_log with a given trace_id) answer 200 by
// design, but what they write lands in B's own namespace: A's rows are compared before and after.

const {
  gw,
  sql,
  orgs: [orgA, orgB],
} = useGateway({ orgs: ['tenant-a', 'tenant-b'] });
let a: Tenant;
let b: Tenant;
let aBefore: TenantRows;

beforeAll(async () => {
  a = await seedTenant(gw.stack.app, orgA, gw.openai.baseURL, 'a');
  b = await seedTenant(gw.stack.app, orgB, gw.openai.baseURL, 'b');
  expect(await drainQueues(gw.stack)).toEqual([]);
  aBefore = (await tenantRows(sql, a.orgId)).rows;
}, 120_000);
/** An entry of A's audit log: B's cursor past it must find nothing. */
let aAuditEntryId = '';
beforeAll(async () => {
  [{ id: aAuditEntryId }] = await sql<{ id: string }[]>`
    select id from audit_log where organization_id = ${a.orgId} order by at desc limit 1`;
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Res = { statusCode: number; body: string; json(): any };
type Case = {
  /** What B asks, built from a tenant's ids: A's, and a ghost tenant's whose ids exist nowhere. */
  request: (t: Tenant) => { method: Method; path: string; body?: unknown };
  status: number;
  check?: (res: Res) => void | Promise<void>;
  /** The answer for A's ids must be the answer for ids that exist nowhere: no existence oracle. */
  sameAsUnknown?: boolean;
};

/** Ids of no organization: what B would send if it guessed. */
function ghostTenant(): Tenant {
  const n = () => 1_900_000_000 + randomBytes(3).readUIntBE(0, 3);
  const tag = `ghost-${randomBytes(4).toString('hex')}`;
  return {
    orgId: randomUUID(),
    key: '',
    project: { uuid: randomUUID(), name: `${tag}-project` },
    rootTraceId: randomUUID(),
    childTraceId: randomUUID(),
    completionTraceId: randomUUID(),
    experiment: { uuid: randomUUID(), run_name: `${tag}-run` },
    finishedExperiment: { uuid: randomUUID() },
    dataset: { id: n(), name: `${tag}-dataset`, testCaseIds: [n(), n()] },
    prompt: { versionId: n(), name: `${tag}-prompt` },
    deploymentId: `${tag}-deployment`,
    providerKey: { provider: `${tag}-llm`, apiKey: 'none' },
    evalMetric: { id: n(), name: `${tag}-metric` },
    evalRule: { id: randomUUID() },
    annotationQueue: { id: randomUUID(), itemId: n() },
    monitor: { id: randomUUID() },
    budget: { id: randomUUID() },
    user: { id: randomUUID(), email: `${tag}-joined@example.com` },
    invitation: { id: randomUUID(), email: `${tag}-pending@example.com` },
  };
}

/**
 * The body with the tenant's text ids and names replaced by the field they came from, numbers the request
 * sent replaced inside text (a page or an index of 1 is not dataset 1), other uuids (made up by the
 * request or the server) by one mark each, and times and latencies, which are measured, by another.
 */
function withIdsNamed(body: string, t: Tenant, request: { path: string; body?: unknown }): string {
  const sent = JSON.stringify(request);
  // The values the request sent: its path's segments and its body's scalars.
  const sentValues = new Set<string>(request.path.split(/[/?&=]/));
  const collectSent = (value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number') sentValues.add(String(value));
    else if (value && typeof value === 'object') Object.values(value).forEach(collectSent);
  };
  collectSent(request.body);
  const ids: [string, string][] = [];
  const collect = (value: unknown, path: string) => {
    if (typeof value === 'string' && value !== '') ids.push([path, value]);
    else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collect(v, `${path}.${k}`);
  };
  collect(t, 't');
  // Longest first, so that an id inside a longer one is not replaced first.
  ids.sort(([, x], [, y]) => y.length - x.length);
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const named = ids.reduce(
    (text, [path, value]) =>
      text
        .replace(new RegExp(`(?<![\\w-])${escape(value)}(?![\\w-])`, 'g'), `<${path}>`)
        // A provider's name also appears as the prefix of the environment variables that would configure it.
        .replaceAll(`${value.toUpperCase().replace(/-/g, '_')}_`, `<${path}>_`),
    body,
  );
  return named
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/"(latency|time_to_first_token)":[\d.e-]+/g, '"$1":<measured>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) =>
      sent.includes(uuid) ? '<uuid sent>' : '<uuid new>',
    )
    .replace(/(?<![\w:.-])\d+(?![\w.-])/g, (n) => (sentValues.has(n) ? '<number sent>' : n));
}

const evaluatedId = randomUUID();
const notFound = (res: Res) => expect(res.json()).toEqual({ detail: expect.any(String) });
const isNull = (res: Res) => expect(res.body).toBe('null');
const emptyArray = (res: Res) => expect(res.json()).toEqual([]);
const emptyPage = (res: Res) => expect(res.json()).toMatchObject({ total: 0, results: [] });
const llm = { provider: 'openai', model: 'gpt-4o-mini', messages: [userMessage('hi')] };
const run = (extra: object) => ({
  id: randomUUID(),
  name: 'chain',
  run_type: 'chain',
  inputs: {},
  outputs: { output: 'x' },
  child_runs: [],
  ...extra,
});

/**
 * The matrix: every endpoint of the API, each with the ids of A it can take. Reads come before writes so
 * that B's own writes under A's ids (which are B's, and allowed) cannot mask a leak.
 */
const MATRIX: [endpoint: string, cases: Case[]][] = [
  ['GET /', [{ request: () => ({ method: 'GET', path: '/' }), status: 200 }]],
  [
    'GET /trace_log/{trace_id}',
    [
      {
        request: (t) => ({ method: 'GET', path: `/trace_log/${t.rootTraceId}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'GET', path: `/trace_log/${t.childTraceId}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'GET', path: `/trace_log/${t.completionTraceId}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /get_trace_logs',
    [
      {
        request: (t) => ({ method: 'POST', path: '/get_trace_logs', body: { project_name: t.project.name } }),
        status: 200,
        check: emptyPage,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/get_trace_logs',
          body: { filter_field: 'trace_id', filter_operator: 'equals', filter_value: t.rootTraceId },
        }),
        status: 200,
        check: emptyPage,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/get_trace_logs',
          body: {
            filter_field: 'root_trace_id',
            filter_operator: 'in',
            filter_value: `${t.rootTraceId},${t.completionTraceId}`,
          },
        }),
        status: 200,
        check: emptyPage,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/get_trace_logs',
          body: { filter_field: 'experiment_uuid', filter_operator: 'equals', filter_value: t.experiment.uuid },
        }),
        status: 200,
        check: emptyPage,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/get_trace_logs',
          body: {
            filter_field: 'metadata',
            filter_key: 'team',
            filter_operator: 'like',
            filter_value: t.project.name.split('-project')[0],
          },
        }),
        status: 200,
        check: emptyPage,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/get_trace_logs',
          body: { filter_field: 'deployment_id', filter_operator: 'equals', filter_value: t.deploymentId },
        }),
        status: 200,
        check: emptyPage,
      },
    ],
  ],
  [
    'POST /experiments',
    [
      {
        request: (t) => ({ method: 'POST', path: '/experiments', body: { project_name: t.project.name } }),
        status: 200,
        check: emptyArray,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/experiments',
          body: { experiment_uuids: [t.experiment.uuid, t.finishedExperiment.uuid] },
        }),
        status: 200,
        check: emptyArray,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'POST', path: '/experiments', body: { run_name_filter: t.experiment.run_name } }),
        status: 200,
        check: emptyArray,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/experiments',
          body: { experiment_name_filter: t.project.name.split('-project')[0] },
        }),
        status: 200,
        check: emptyArray,
      },
    ],
  ],
  [
    'GET /experiment/{uuid}/stats',
    [
      {
        request: (t) => ({ method: 'GET', path: `/experiment/${t.experiment.uuid}/stats` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'GET', path: `/experiment/${t.finishedExperiment.uuid}/stats` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /experiment/{uuid}/trace_logs',
    [
      {
        request: (t) => ({ method: 'POST', path: `/experiment/${t.experiment.uuid}/trace_logs`, body: {} }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'POST', path: `/experiment/${t.finishedExperiment.uuid}/trace_logs` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'GET /collection/{id or name}',
    [
      {
        request: (t) => ({ method: 'GET', path: `/collection/${t.dataset.id}` }),
        status: 200,
        check: isNull,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'GET', path: `/collection/${encodeURIComponent(t.dataset.name)}` }),
        status: 200,
        check: isNull,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'GET /prompts',
    [
      {
        request: (t) => ({ method: 'GET', path: `/prompts?name=${encodeURIComponent(t.prompt.name)}` }),
        status: 200,
        check: emptyArray,
        sameAsUnknown: true,
      },
      {
        request: () => ({ method: 'GET', path: '/prompts' }),
        status: 200,
        check: (res) => expect(res.json().map((v: { name: string }) => v.name)).toEqual([b.prompt.name]),
      },
    ],
  ],
  [
    'GET /deployments',
    [
      {
        request: () => ({ method: 'GET', path: '/deployments' }),
        status: 200,
        check: (res) =>
          expect(res.json().map((d: { deployment_id: string }) => d.deployment_id)).toEqual([b.deploymentId]),
      },
    ],
  ],
  [
    'GET /provider-keys',
    [
      {
        request: () => ({ method: 'GET', path: '/provider-keys' }),
        status: 200,
        check: (res) =>
          expect(res.json().map((k: { provider: string }) => k.provider)).toEqual([b.providerKey.provider]),
      },
    ],
  ],
  [
    'GET /eval-metrics',
    [
      {
        request: () => ({ method: 'GET', path: '/eval-metrics' }),
        status: 200,
        check: (res) => expect(res.json().map((m: { id: number }) => m.id)).toEqual([b.evalMetric.id]),
      },
    ],
  ],
  [
    'GET /audit-log',
    [
      {
        request: () => ({ method: 'GET', path: '/audit-log?limit=500' }),
        status: 200,
        check: async (res) => {
          const { key_id } = (await call(gw.stack.app, b.key, 'GET', '/me')).json();
          const { entries } = res.json();
          expect(entries.length).toBeGreaterThan(0);
          // B's changes alone: by its key, or by its person (who accepted B's invitation).
          expect(
            entries.filter(
              (e: { actor: { key_id: string | null; user_id: string | null } }) =>
                e.actor.key_id !== key_id && e.actor.user_id !== b.user.id,
            ),
          ).toEqual([]);
        },
      },
      {
        request: () => ({ method: 'GET', path: `/audit-log?before=${aAuditEntryId}` }),
        status: 200,
        check: (res) => expect(res.json()).toEqual({ entries: [], next: null }),
      },
    ],
  ],
  [
    'GET /users',
    [
      {
        request: () => ({ method: 'GET', path: '/users' }),
        status: 200,
        check: (res) => expect(res.json().map((u: { id: string }) => u.id)).toEqual([b.user.id]),
      },
    ],
  ],
  [
    'GET /invitations',
    [
      {
        request: () => ({ method: 'GET', path: '/invitations' }),
        status: 200,
        check: (res) => expect(res.json().map((i: { id: string }) => i.id)).toEqual([b.invitation.id]),
      },
    ],
  ],
  [
    'GET /api-keys',
    [
      {
        request: () => ({ method: 'GET', path: '/api-keys' }),
        status: 200,
        check: async (res) => {
          const { key_id } = (await call(gw.stack.app, b.key, 'GET', '/me')).json();
          expect(res.json().map((k: { id: string }) => k.id)).toEqual([key_id]);
        },
      },
    ],
  ],
  [
    'POST /deployed-prompt',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/deployed-prompt',
          body: { deployment_id: t.deploymentId, llm_inputs: { word: 'x' } },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /completion',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/completion',
          body: { deployment_id: t.deploymentId, inputs: { word: 'x' } },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/completion',
          body: { llm_configuration: llm, project_uuid: t.project.uuid },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/completion',
          body: { llm_configuration: llm, project_name: b.project.name, eval_metric_ids: [t.evalMetric.id] },
        }),
        status: 422,
        sameAsUnknown: true,
      },
      {
        // A's saved key (and base URL) for this provider is A's alone: B's call finds no provider at all.
        request: (t) => ({
          method: 'POST',
          path: '/completion',
          body: { llm_configuration: { ...llm, provider: t.providerKey.provider }, project_name: b.project.name },
        }),
        status: 200,
        sameAsUnknown: true,
        check: (res) => {
          expect(res.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/unknown provider/) });
          expect(gw.openai.requests.filter((r) => JSON.stringify(r.headers).includes(a.providerKey.apiKey))).toEqual(
            [],
          );
        },
      },
    ],
  ],
  [
    'POST /completion/stream',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/completion/stream',
          body: { deployment_id: t.deploymentId, inputs: { word: 'x' } },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/completion/stream',
          body: { llm_configuration: llm, project_uuid: t.project.uuid },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /experiment',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/experiment',
          body: { name: 'steal', project_uuid: t.project.uuid, run_name: t.experiment.run_name },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /experiment/{uuid}/finished',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: `/experiment/${t.experiment.uuid}/finished`,
          body: { status: 'failed', metadata: { pwned: true } },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'POST', path: `/experiment/${t.finishedExperiment.uuid}/finished` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /testcases',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/testcases',
          body: { id: t.dataset.id, test_cases: [{ inputs: { question: 'pwned' } }] },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /update_test_case/{dataset_id}/{test_case_id}',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: `/update_test_case/${t.dataset.id}/${t.dataset.testCaseIds[0]}`,
          body: { inputs: { question: 'pwned' }, target: 'pwned' },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      // B's own dataset with A's test case, and A's dataset with B's test case: the pair must be one organization's.
      {
        request: (t) => ({
          method: 'POST',
          path: `/update_test_case/${b.dataset.id}/${t.dataset.testCaseIds[1]}`,
          body: { target: 'pwned' },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: `/update_test_case/${t.dataset.id}/${b.dataset.testCaseIds[0]}`,
          body: { target: 'pwned' },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /deployments',
    [
      {
        request: (t) => ({ method: 'POST', path: '/deployments', body: { prompt_version_id: t.prompt.versionId } }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/deployments',
          body: { prompt_version_id: t.prompt.versionId, deployment_id: b.deploymentId },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      // A's deployment id names a deployment of B's own: A's keeps pointing where it did.
      {
        request: (t) => ({
          method: 'POST',
          path: '/deployments',
          body: { prompt_version_id: b.prompt.versionId, deployment_id: t.deploymentId },
        }),
        status: 200,
        check: (res) => expect(res.json().prompt_version.id).toBe(b.prompt.versionId),
      },
    ],
  ],
  [
    'DELETE /provider-keys/{provider}',
    [
      {
        request: (t) => ({ method: 'DELETE', path: `/provider-keys/${t.providerKey.provider}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  ...(
    [
      ['GET /eval-rules/{id}', (t: Tenant) => ({ method: 'GET', path: `/eval-rules/${t.evalRule.id}` })],
      [
        'PATCH /eval-rules/{id}',
        (t: Tenant) => ({ method: 'PATCH', path: `/eval-rules/${t.evalRule.id}`, body: { enabled: true } }),
      ],
      ['DELETE /eval-rules/{id}', (t: Tenant) => ({ method: 'DELETE', path: `/eval-rules/${t.evalRule.id}` })],
      [
        'POST /eval-rules/{id}/backfill',
        (t: Tenant) => ({
          method: 'POST',
          path: `/eval-rules/${t.evalRule.id}/backfill`,
          body: { from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' },
        }),
      ],
      [
        'GET /annotation-queues/{id}',
        (t: Tenant) => ({ method: 'GET', path: `/annotation-queues/${t.annotationQueue.id}` }),
      ],
      [
        'PATCH /annotation-queues/{id}',
        (t: Tenant) => ({
          method: 'PATCH',
          path: `/annotation-queues/${t.annotationQueue.id}`,
          body: { instructions: 'x' },
        }),
      ],
      [
        'DELETE /annotation-queues/{id}',
        (t: Tenant) => ({ method: 'DELETE', path: `/annotation-queues/${t.annotationQueue.id}` }),
      ],
      [
        'POST /annotation-queues/{id}/items',
        (t: Tenant) => ({
          method: 'POST',
          path: `/annotation-queues/${t.annotationQueue.id}/items`,
          body: { trace_ids: [t.rootTraceId] },
        }),
      ],
      [
        'POST /annotation-queues/{id}/next',
        (t: Tenant) => ({ method: 'POST', path: `/annotation-queues/${t.annotationQueue.id}/next`, body: {} }),
      ],
      [
        'POST /annotation-queues/{id}/items/{item_id}/complete',
        (t: Tenant) => ({
          method: 'POST',
          path: `/annotation-queues/${t.annotationQueue.id}/items/${t.annotationQueue.itemId}/complete`,
          body: {},
        }),
      ],
      ['GET /monitors/{id}', (t: Tenant) => ({ method: 'GET', path: `/monitors/${t.monitor.id}` })],
      [
        'PATCH /monitors/{id}',
        (t: Tenant) => ({ method: 'PATCH', path: `/monitors/${t.monitor.id}`, body: { enabled: false } }),
      ],
      ['DELETE /monitors/{id}', (t: Tenant) => ({ method: 'DELETE', path: `/monitors/${t.monitor.id}` })],
      [
        'PATCH /budgets/{id}',
        (t: Tenant) => ({ method: 'PATCH', path: `/budgets/${t.budget.id}`, body: { limit_usd: 1 } }),
      ],
      ['DELETE /budgets/{id}', (t: Tenant) => ({ method: 'DELETE', path: `/budgets/${t.budget.id}` })],
      [
        'POST /monitors/preview',
        (t: Tenant) => ({
          method: 'POST',
          path: '/monitors/preview',
          body: { project_uuid: t.project.uuid, metric: 'trace_count', window_minutes: 60 },
        }),
      ],
    ] as [string, Case['request']][]
  ).map(([name, request]): [string, Case[]] => [
    name,
    [{ request, status: 404, check: notFound, sameAsUnknown: true }],
  ]),
  [
    'POST /eval-rules (feeding a queue of another organization)',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/eval-rules',
          body: {
            name: `feeds-${t.annotationQueue.id}`,
            project_name: b.project.name,
            metric_names: [b.evalMetric.name],
            annotation_queue: { queue_id: t.annotationQueue.id, on_error: true },
          },
        }),
        status: 422,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'GET /eval-rules, /annotation-queues and /monitors',
    [
      {
        request: () => ({ method: 'GET', path: '/eval-rules' }),
        status: 200,
        check: (res) => expect(res.json().map((r: { id: string }) => r.id)).toEqual([b.evalRule.id]),
      },
      {
        request: () => ({ method: 'GET', path: '/annotation-queues' }),
        status: 200,
        check: (res) => expect(res.json().map((q: { id: string }) => q.id)).toEqual([b.annotationQueue.id]),
      },
      {
        request: () => ({ method: 'GET', path: '/monitors' }),
        status: 200,
        check: (res) => expect(res.json().map((m: { id: string }) => m.id)).toEqual([b.monitor.id]),
      },
      {
        request: () => ({ method: 'GET', path: '/budgets' }),
        status: 200,
        check: (res) => expect(res.json().map((m: { id: string }) => m.id)).toEqual([b.budget.id]),
      },
    ],
  ],
  [
    'DELETE /eval-metrics/{id}',
    [
      {
        request: (t) => ({ method: 'DELETE', path: `/eval-metrics/${t.evalMetric.id}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /trace_log',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/trace_log',
          body: { project_uuid: t.project.uuid, trace_name: 'steal' },
        }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      // A's trace id as B's own span, attached under A's root and A's experiment: all of it stays B's.
      {
        request: (t) => ({
          method: 'POST',
          path: '/trace_log',
          body: {
            trace_id: t.childTraceId,
            root_trace_id: t.rootTraceId,
            parent_trace_id: t.rootTraceId,
            experiment_uuid: t.experiment.uuid,
            project_name: b.project.name,
            output: 'pwned',
          },
        }),
        status: 200,
      },
    ],
  ],
  [
    'POST /trace_logs/batch',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/trace_logs/batch',
          body: {
            trace_logs: [
              { project_uuid: t.project.uuid },
              { trace_id: t.completionTraceId, project_name: b.project.name, output: 'pwned' },
            ],
          },
        }),
        status: 207,
        sameAsUnknown: true,
        check: (res) => expect(res.json().results.map((r: { status: number }) => r.status)).toEqual([404, 200]),
      },
    ],
  ],
  [
    'POST /trace_log/chainlib',
    [
      {
        request: (t) => ({ method: 'POST', path: '/trace_log/chainlib', body: run({ project_uuid: t.project.uuid }) }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({
          method: 'POST',
          path: '/trace_log/chainlib',
          body: run({ id: t.rootTraceId, project_name: b.project.name }),
        }),
        status: 200,
      },
    ],
  ],
  [
    'POST /trace_log/langchain',
    [
      {
        request: (t) => ({ method: 'POST', path: '/trace_log/langchain', body: run({ project_uuid: t.project.uuid }) }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /trace_log (evaluation_metric_names)',
    [
      {
        // A's metric (exact_match) would score this span 1; for B no metric of that name exists (yet).
        request: (t) => ({
          method: 'POST',
          path: '/trace_log',
          body: {
            trace_id: evaluatedId,
            project_name: b.project.name,
            output: 'same',
            target: 'same',
            evaluation_metric_names: [t.evalMetric.name],
          },
        }),
        status: 200,
        check: async () => {
          expect(await drainQueues(gw.stack)).toEqual([]);
          const span = (await readTrace(gw.stack.app, b.key, evaluatedId)).json();
          expect(span.scores ?? []).toEqual([]);
          expect(span.metadata.sightline_eval_errors).toEqual({ [a.evalMetric.name]: expect.any(String) });
        },
      },
    ],
  ],
  [
    'PUT /trace_log',
    [
      {
        request: (t) => ({
          method: 'PUT',
          path: '/trace_log',
          body: {
            trace_id: t.rootTraceId,
            root_trace_id: t.rootTraceId,
            field_name_to_value_map: { output: 'pwned', status: 'error', experiment_uuid: t.finishedExperiment.uuid },
          },
        }),
        status: 200,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /feedback',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/feedback',
          body: { trace_id: t.completionTraceId, score: 0, name: 'pwned', target: 'pwned' },
        }),
        status: 200,
        sameAsUnknown: true,
      },
      {
        request: (t) => ({ method: 'POST', path: '/feedback', body: { inference_id: t.rootTraceId, score: 1 } }),
        status: 200,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /project',
    [
      {
        request: (t) => ({ method: 'POST', path: '/project', body: { name: t.project.name } }),
        status: 200,
        check: (res) =>
          expect(res.json()).toMatchObject({ was_created: true, uuid: expect.not.stringMatching(a.project.uuid) }),
      },
    ],
  ],
  [
    'POST /collection',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/collection',
          body: { name: t.dataset.name, column_names: ['question'], test_cases: [{ inputs: { question: 'b' } }] },
        }),
        status: 200,
        check: (res) => expect(res.json().id).not.toBe(a.dataset.id),
      },
    ],
  ],
  [
    'POST /testcases (by name)',
    [
      // After B made a dataset of the same name: the cases go to B's.
      {
        request: (t) => ({
          method: 'POST',
          path: '/testcases',
          body: { name: t.dataset.name, test_cases: [{ inputs: { question: 'b2' } }] },
        }),
        status: 200,
        check: (res) => expect(res.json()).toEqual([expect.any(Number)]),
      },
    ],
  ],
  [
    'POST /prompts',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/prompts',
          body: { name: t.prompt.name, model: 'm', provider: 'openai', messages: [userMessage('b')] },
        }),
        status: 200,
        check: (res) => expect(res.json().version_number).toBe(1),
      },
    ],
  ],
  [
    'POST /provider-keys',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/provider-keys',
          body: { provider: t.providerKey.provider, api_key: 'sk-b-own-key' },
        }),
        status: 200,
      },
    ],
  ],
  [
    'POST /eval-metrics',
    [
      {
        request: (t) => ({
          method: 'POST',
          path: '/eval-metrics',
          body: { name: t.evalMetric.name, type: 'levenshtein' },
        }),
        status: 200,
        check: (res) => expect(res.json().id).not.toBe(a.evalMetric.id),
      },
    ],
  ],
  [
    'PATCH /users/{id}',
    [
      {
        request: (t) => ({ method: 'PATCH', path: `/users/${t.user.id}`, body: { role: 'admin' } }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'DELETE /users/{id}/sessions',
    [
      {
        request: (t) => ({ method: 'DELETE', path: `/users/${t.user.id}/sessions` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'DELETE /users/{id}',
    [
      {
        request: (t) => ({ method: 'DELETE', path: `/users/${t.user.id}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'DELETE /invitations/{id}',
    [
      {
        request: (t) => ({ method: 'DELETE', path: `/invitations/${t.invitation.id}` }),
        status: 404,
        check: notFound,
        sameAsUnknown: true,
      },
    ],
  ],
  [
    'POST /invitations',
    [
      {
        // Inviting A's people, or the email A invited, is B's own invitation: A's stay as they were.
        request: (t) => ({ method: 'POST', path: '/invitations', body: { email: t.invitation.email, role: 'admin' } }),
        status: 200,
        check: (res) => expect(res.json().id).not.toBe(a.invitation.id),
      },
      {
        request: (t) => ({ method: 'POST', path: '/invitations', body: { email: t.user.email, role: 'admin' } }),
        status: 200,
      },
    ],
  ],
];

/** Values of A that no request of B carries: none may appear in any answer to B. */
const secretsOfA = () => [
  a.orgId,
  a.providerKey.apiKey,
  a.project.uuid,
  a.rootTraceId,
  a.childTraceId,
  a.completionTraceId,
  a.experiment.uuid,
  a.finishedExperiment.uuid,
  a.user.id,
  a.invitation.id,
];

describe('cross-organization matrix: B uses A’s ids on every endpoint', () => {
  for (const [endpoint, cases] of MATRIX) {
    it(endpoint, async () => {
      for (const c of cases) {
        const req = c.request(a);
        const res = await call(gw.stack.app, b.key, req.method, req.path, req.body);
        expect(res.statusCode, `${req.method} ${req.path} ${JSON.stringify(req.body)}: ${res.body.slice(0, 300)}`).toBe(
          c.status,
        );
        await c.check?.(res);
        const sent = JSON.stringify(req);
        for (const secret of secretsOfA()) if (!sent.includes(secret)) expect(res.body).not.toContain(secret);
        if (c.sameAsUnknown) {
          const nobody = ghostTenant();
          const ghost = c.request(nobody);
          const unknown = await call(gw.stack.app, b.key, ghost.method, ghost.path, ghost.body);
          expect(unknown.statusCode, `${ghost.method} ${ghost.path} with ids of nobody`).toBe(res.statusCode);
          // Word for word, once each tenant's ids are replaced by their names.
          expect(withIdsNamed(unknown.body, nobody, ghost), `${ghost.method} ${ghost.path}`).toBe(
            withIdsNamed(res.body, a, req),
          );
        }
      }
    });
  }

  it("after the whole matrix, every row of A's in every table is unchanged and A still reads its data", async () => {
    expect(await drainQueues(gw.stack)).toEqual([]);
    const { rows, uncovered } = await tenantRows(sql, a.orgId);
    expect(uncovered.filter((t) => !/migration/i.test(t))).toEqual([]);
    expect(missingRows(aBefore, rows)).toEqual({});
    expect(checksums(rows)).toEqual(checksums(aBefore));
    const root = (await readTrace(gw.stack.app, a.key, a.rootTraceId)).json();
    expect(root).toMatchObject({
      output: 'answer',
      status: 'success',
      project_uuid: a.project.uuid,
      experiment_uuid: a.experiment.uuid,
    });
    expect(root.children.map((c: { trace_id: string }) => c.trace_id)).toEqual([a.childTraceId]);
    const stats = await call(gw.stack.app, a.key, 'GET', `/experiment/${a.experiment.uuid}/stats`);
    expect(stats.json().parent_trace_stats.map((s: { trace_id: string }) => s.trace_id)).toEqual([a.rootTraceId]);
    const deployed = await call(gw.stack.app, a.key, 'POST', '/deployed-prompt', { deployment_id: a.deploymentId });
    expect(deployed.json().version_number).toBe(1);
    expect((await call(gw.stack.app, a.key, 'GET', `/collection/${a.dataset.id}`)).json().test_cases).toEqual({
      [a.dataset.testCaseIds[0]]: expect.objectContaining({ inputs: { question: 'q1' }, target: 't1' }),
      [a.dataset.testCaseIds[1]]: expect.objectContaining({ inputs: { question: 'q2' } }),
    });
  });

  it("B's own writes under A's ids stay B's: B reads them, A never does", async () => {
    // B's span under A's child id exists for B, in B's project, and A's root does not list it.
    const mine = (await readTrace(gw.stack.app, b.key, a.childTraceId)).json();
    expect(mine).toMatchObject({ output: 'pwned', project_uuid: b.project.uuid });
    // The chainlib run B posted under A's root id is B's own root; its only child is B's span above.
    const chain = (await readTrace(gw.stack.app, b.key, a.rootTraceId)).json();
    expect(chain.project_uuid).toBe(b.project.uuid);
    expect(chain.children).toEqual([
      expect.objectContaining({ trace_id: a.childTraceId, output: 'pwned', organization_id: b.orgId }),
    ]);
    // A's view of the same ids is A's alone.
    const theirs = (await readTrace(gw.stack.app, a.key, a.childTraceId)).json();
    expect(theirs).toMatchObject({ organization_id: a.orgId, project_uuid: a.project.uuid, output: null });
  });
});
