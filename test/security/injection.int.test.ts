import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FILTER_OPERATORS as OPERATORS } from '@sightline/core';
import { urlText } from '../fuzz/hostile';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { drainQueues } from '../support/queues';
import { checksums, missingRows, seedTenant, tenantRows, type Tenant, type TenantRows } from './tenant';

// Every search input the API takes, and every filter input of the trace-log listing (field, key, value,
// operator), receives SQL-injection strings. The attacker's organization holds one span per string whose
// fields literally hold that string, so a correct answer is known exactly: a literal match, or a 422;
// never a 5xx, never another organization's rows, and no table touched.

const INJECTIONS = [
  `'`,
  `''`,
  `' or 1=1 --`,
  `' OR '1'='1`,
  `'; drop table spans; --`,
  `"; drop table spans; --`,
  `\\`,
  `\\'`,
  `' /* x`,
  `*/ or 1=1 /*`,
  `$1`,
  `$1::text or true`,
  `$$ or 1=1 $$`,
  `$tag$ x $tag$`,
  `%`,
  `_`,
  `%' or '%'='`,
  `\u2019 or 1=1 --`,
  `\uff07 or 1=1 --`,
  `) or (1=1`,
  `1; select pg_sleep(3)`,
  `' union select key_hash::text from api_keys --`,
  `a\u0000b' or 1=1`,
  `{"a": 1}`,
  `ARRAY['x']`,
  `x'::text`,
  `E'\\x27'`,
  `-- comment`,
  `?`,
  `:name`,
  `' and (select count(*) from pg_tables) > 0 --`,
  `\\x27 or 1=1`,
  `x\ud800' or '`,
  `@>`,
];
/** What the API stores and compares for a string: JSON bodies lose NUL characters and lone surrogates. */
const clean = (s: string) => s.replaceAll('\0', '').toWellFormed();

const TEXT_FIELDS = [
  'trace_name',
  'output',
  'target',
  'error',
  'output_for_eval_metrics',
  'deployment_id',
  'end_user_identifier',
  'session_id',
  'status',
];
const TYPED_FIELDS = [
  'trace_id',
  'root_trace_id',
  'parent_trace_id',
  'experiment_uuid',
  'depth',
  'execution_order',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'time_to_first_token',
  'latency',
  'cost',
  'feedback_score',
  'apply_eval_frac',
  'log_sample_rate',
  'cache_hit',
  'start_timestamp',
  'end_timestamp',
];
const MAP_FIELDS = ['metadata', 'inputs', 'configuration'];

type Root = {
  id: string;
  text: Record<string, string | null>;
  map: Record<string, string>;
  tags: string[];
  score: string | null;
  annotation: string | null;
};

const {
  gw,
  sql,
  orgs: [victimOrg, attacker],
} = useGateway({ orgs: ['victim', 'attacker'] });
let victim: Tenant;
let victimBefore: TenantRows;
let attackerBefore: TenantRows;
let tablesBefore: string[];
const roots: Root[] = [];
const experiments: { uuid: string; name: string; run_name: string; project: string }[] = [];
const datasets: { id: number; name: string }[] = [];

const post = (path: string, body: unknown) => call(gw.stack.app, attacker.key, 'POST', path, body);
const tables = async () =>
  (
    await sql<
      { t: string }[]
    >`select table_name::text as t from information_schema.tables where table_schema = current_schema() order by 1`
  ).map((r) => r.t);

beforeAll(async () => {
  victim = await seedTenant(gw.stack.app, victimOrg, gw.openai.baseURL, 'victim');
  const tag = randomBytes(4).toString('hex');
  for (const [i, s] of INJECTIONS.entries()) {
    // The attacker's project, experiment and span for this string: each holds it wherever text is free.
    const project = await post('/project', { name: s });
    expect(project.statusCode, project.body).toBe(200);
    const exp = (
      await post('/experiment', {
        name: s,
        project_uuid: project.json().uuid,
        run_name: `run_${i}_${tag}`,
        metadata: { [s]: s },
      })
    ).json();
    experiments.push({ uuid: exp.uuid, name: clean(s), run_name: exp.run_name, project: clean(s) });
    const id = randomUUID();
    const res = await post('/trace_log', {
      trace_id: id,
      project_name: s,
      experiment_uuid: exp.uuid,
      trace_name: s,
      output: s,
      target: s,
      error: s,
      output_for_eval_metrics: s,
      deployment_id: s,
      end_user_identifier: s,
      session_id: s,
      metadata: { [s]: s },
      inputs: { [s]: s },
      configuration: { [s]: s },
      tags: [s],
      scores: [{ name: s, score: 0.5 }],
      annotations: { [s]: { u1: { created_at: '2026-01-01', user_id: 'u1', score: 1, value: s, annotation_name: s } } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const text = Object.fromEntries(TEXT_FIELDS.map((f) => [f, f === 'status' ? null : clean(s)]));
    roots.push({ id, text, map: { [clean(s)]: clean(s) }, tags: [clean(s)], score: clean(s), annotation: clean(s) });
    if (!/^\d+$/.test(s)) {
      const ds = await post('/collection', {
        name: s,
        column_names: ['q'],
        test_cases: [{ inputs: { q: s }, target: s }],
      });
      expect(ds.statusCode, ds.body).toBe(200);
      datasets.push({ id: ds.json().id, name: clean(s) });
    }
    expect(
      (await post('/prompts', { name: s, model: 'm', provider: 'openai', messages: [{ role: 'user', content: s }] }))
        .statusCode,
    ).toBe(200);
  }
  // A plain span in the same projects' organization: most filters must not match it.
  const plain = randomUUID();
  await post('/trace_log', {
    trace_id: plain,
    project_name: `plain-${tag}`,
    trace_name: 'plain',
    output: 'plain',
    status: 'success',
    metadata: { plain: 'plain' },
    tags: ['plain'],
  });
  roots.push({
    id: plain,
    text: {
      ...Object.fromEntries(TEXT_FIELDS.map((f) => [f, null])),
      trace_name: 'plain',
      output: 'plain',
      status: 'success',
    },
    map: { plain: 'plain' },
    tags: ['plain'],
    score: null,
    annotation: null,
  });
  for (const r of roots) expect((await readTrace(gw.stack.app, attacker.key, r.id)).statusCode).toBe(200);
  expect(await drainQueues(gw.stack)).toEqual([]);
  victimBefore = (await tenantRows(sql, victim.orgId)).rows;
  attackerBefore = (await tenantRows(sql, attacker.id)).rows;
  tablesBefore = await tables();
}, 180_000);

type Filter = { filter_field: string; filter_operator: string; filter_value?: string; filter_key?: string };
type Outcome = { status: number; ids: string[] };

/** Runs many listings a few at a time; every answer is a 200 of the attacker's roots or a 422 naming a filter input. */
async function listAll(filters: Filter[]): Promise<Outcome[]> {
  const known = new Set(roots.map((r) => r.id));
  const out: Outcome[] = new Array(filters.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < filters.length; i = next++) {
      const res = await post('/get_trace_logs', { ...filters[i], page_size: 1000 });
      const where = `${JSON.stringify(filters[i])}: ${res.body.slice(0, 300)}`;
      expect([200, 422], where).toContain(res.statusCode);
      if (res.statusCode === 422) {
        expect(res.json().detail, where).toEqual([
          {
            loc: ['body', expect.stringMatching(/^filter_(field|key|operator|value)$/)],
            msg: expect.any(String),
            type: expect.any(String),
          },
        ]);
        out[i] = { status: 422, ids: [] };
        continue;
      }
      const ids: string[] = res.json().results.map((r: { trace_id: string }) => r.trace_id);
      for (const id of ids) expect(known.has(id), `${where}: a root that is not the attacker's`).toBe(true);
      expect(res.json().total, where).toBe(ids.length);
      out[i] = { status: 200, ids };
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return out;
}

/** The exact answer where one is defined; undefined where only "a subset of the attacker's roots" is. */
function expected(
  op: string,
  value: string | undefined,
  read: (r: Root) => string | null | undefined,
): string[] | undefined {
  const v = value === undefined ? undefined : clean(value);
  const match = (f: (x: string | null | undefined) => boolean) =>
    roots
      .filter((r) => f(read(r)))
      .map((r) => r.id)
      .sort();
  switch (op) {
    case 'equals':
      return match((x) => x === v);
    case 'not_equals':
      return match((x) => x !== v);
    case 'like':
      return match((x) => x != null && x.toLowerCase().includes(v!.toLowerCase()));
    case 'is_null':
      return match((x) => x == null);
    case 'exists':
      return match((x) => x != null);
    case 'in': {
      const items = v!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      return items.length ? match((x) => x != null && items.includes(x)) : undefined;
    }
    default:
      return undefined;
  }
}

function check(filters: Filter[], outcomes: Outcome[], answer: (f: Filter) => string[] | undefined | 'refused') {
  filters.forEach((f, i) => {
    const want = answer(f);
    const got = outcomes[i];
    if (want === 'refused') expect(got.status, JSON.stringify(f)).toBe(422);
    else if (want && got.status === 200) expect([...got.ids].sort(), JSON.stringify(f)).toEqual(want);
    else if (want) expect.fail(`${JSON.stringify(f)} was refused; expected ${want.length} roots`);
  });
}

const sweep = (fields: string[], extra: Partial<Filter> = {}) =>
  fields.flatMap((filter_field) =>
    OPERATORS.flatMap((filter_operator) =>
      INJECTIONS.map((filter_value) => ({ filter_field, filter_operator, filter_value, ...extra })),
    ),
  );

// Each sweep sends every operator with every injected value: hundreds of requests, 12 s alone here and past
// 30 s beside another test file in CI. The limit bounds a hang, not the speed.
describe('SQL injection through the filters of POST /get_trace_logs', { timeout: 120_000 }, () => {
  it('filter_value of every text field: literal matches only', async () => {
    const filters = sweep(TEXT_FIELDS);
    check(filters, await listAll(filters), (f) =>
      expected(f.filter_operator, f.filter_value, (r) => r.text[f.filter_field]),
    );
  });

  it('filter_value of every typed field (uuid, integer, number, boolean, timestamp): 422 unless the operator takes no value', async () => {
    const filters = sweep(TYPED_FIELDS);
    check(filters, await listAll(filters), (f) =>
      ['is_null', 'exists'].includes(f.filter_operator) ? undefined : 'refused',
    );
  });

  it('filter_key and filter_value of map fields (metadata, inputs, configuration)', async () => {
    const filters = [
      ...sweep(MAP_FIELDS).map((f) => ({ ...f, filter_key: f.filter_value })),
      ...MAP_FIELDS.flatMap((filter_field) =>
        INJECTIONS.map((filter_key) => ({
          filter_field,
          filter_operator: 'equals',
          filter_key,
          filter_value: 'plain',
        })),
      ),
      ...MAP_FIELDS.flatMap((filter_field) =>
        INJECTIONS.map((filter_key) => ({ filter_field, filter_operator: 'exists', filter_key })),
      ),
    ];
    const ordering = (op: string) => !['equals', 'not_equals', 'like', 'is_null', 'exists', 'in'].includes(op);
    check(filters, await listAll(filters), (f) =>
      ordering(f.filter_operator)
        ? undefined
        : expected(f.filter_operator, f.filter_value, (r) => r.map[clean(f.filter_key!)]),
    );
  });

  it('filter_value of tags, score:{name} and annotation:{type}:{id}, with the name and id injected too', async () => {
    const tagFilters = sweep(['tags']);
    const tagAnswer = (f: Filter) => {
      const v = clean(f.filter_value!);
      const ids = (p: (r: Root) => boolean) =>
        roots
          .filter(p)
          .map((r) => r.id)
          .sort();
      switch (f.filter_operator) {
        case 'equals':
          return ids((r) => r.tags.includes(v));
        case 'not_equals':
          return ids((r) => !r.tags.includes(v));
        case 'like':
          return ids((r) => r.tags.some((t) => t.toLowerCase().includes(v.toLowerCase())));
        case 'is_null':
          return ids((r) => !r.tags.length);
        case 'exists':
          return ids((r) => r.tags.length > 0);
        case 'in': {
          const items = v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
          return items.length ? ids((r) => r.tags.some((t) => items.includes(t))) : 'refused';
        }
        default:
          return 'refused';
      }
    };
    const tagOutcomes = await listAll(tagFilters);
    check(tagFilters, tagOutcomes, tagAnswer);

    // The name and criterion are the injection strings; the value is a score or one of them.
    const named = INJECTIONS.flatMap((s) => [
      ...OPERATORS.map((filter_operator) => ({
        filter_field: `score:${s}`,
        filter_operator,
        filter_value: filter_operator === 'between' ? '0,1' : '0.5',
      })),
      ...OPERATORS.map((filter_operator) => ({
        filter_field: `annotation:value:${s}`,
        filter_operator,
        filter_value: s,
      })),
      ...OPERATORS.map((filter_operator) => ({
        filter_field: `annotation:score:${s}`,
        filter_operator,
        filter_value: s,
      })),
    ]);
    const namedOutcomes = await listAll(named);
    check(named, namedOutcomes, (f) => {
      const [kind, ...rest] = f.filter_field.split(':');
      const ids = (p: (r: Root) => boolean) =>
        roots
          .filter(p)
          .map((r) => r.id)
          .sort();
      const none = () => false;
      if (kind === 'score') {
        // Every stored score is 0.5; the filter value is 0.5 (0,1 for between).
        const has = (r: Root) => r.score === clean(rest.join(':'));
        const answers: Record<string, string[] | 'refused'> = {
          equals: ids(has),
          not_equals: ids(none),
          like: 'refused',
          greater_than_or_equal: ids(has),
          less_than_or_equal: ids(has),
          greater_than: ids(none),
          less_than: ids(none),
          is_null: ids((r) => !has(r)),
          exists: ids(has),
          in: ids(has),
          between: ids(has),
        };
        return answers[f.filter_operator];
      }
      const [type, ...id] = rest;
      const criterion = clean(id.join(':'));
      const has = (r: Root) => r.annotation === criterion;
      if (f.filter_operator === 'is_null') return ids((r) => !has(r));
      if (f.filter_operator === 'exists') return ids(has);
      // An annotation's score is a number: the injection string is no valid value for it.
      if (type === 'score') return 'refused';
      // Each annotation's value is its criterion, which is the filter value here.
      const items = criterion
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const answers: Record<string, string[] | 'refused' | undefined> = {
        equals: ids(has),
        like: ids(has),
        not_equals: ids(none),
        in: items.length ? ids((r) => has(r) && items.includes(criterion)) : 'refused',
      };
      return answers[f.filter_operator];
    });
  });

  it('filter_field and filter_operator themselves: always 422, naming the input', async () => {
    const filters = [
      ...INJECTIONS.map((filter_field) => ({ filter_field, filter_operator: 'equals', filter_value: 'x' })),
      ...INJECTIONS.map((s) => ({ filter_field: `trace_name${s}`, filter_operator: 'equals', filter_value: 'x' })),
      ...INJECTIONS.map((s) => ({ filter_field: `annotation:${s}:c`, filter_operator: 'equals', filter_value: 'x' })),
      ...INJECTIONS.map((filter_operator) => ({ filter_field: 'trace_name', filter_operator, filter_value: 'x' })),
      ...INJECTIONS.map((s) => ({ filter_field: 'output', filter_operator: `equals${s}`, filter_value: 'x' })),
    ];
    check(filters, await listAll(filters), () => 'refused');
  });

  it('the experiment trace-log listing applies the same filters within the experiment only', async () => {
    const [first] = experiments;
    for (const s of INJECTIONS) {
      for (const filter_operator of ['equals', 'like', 'not_equals', 'in']) {
        const res = await post(`/experiment/${first.uuid}/trace_logs`, {
          filter_field: 'output',
          filter_operator,
          filter_value: s,
        });
        expect([200, 422], res.body).toContain(res.statusCode);
        const answer = expected(filter_operator, s, (r) => r.text.output);
        // A filter the listing answers elsewhere must be answered here too, not refused.
        if (answer) expect(res.statusCode, res.body).toBe(200);
        if (res.statusCode !== 200) continue;
        const want = (answer ?? []).filter((id) => id === roots[0].id);
        expect(res.json().map((r: { trace_id: string }) => r.trace_id)).toEqual(want);
      }
    }
  });
});

describe('SQL injection through the other search and name inputs', () => {
  it('project_name of POST /get_trace_logs finds exactly the project of that literal name', async () => {
    for (const [i, s] of INJECTIONS.entries()) {
      const res = await post('/get_trace_logs', { project_name: s });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().results.map((r: { trace_id: string }) => r.trace_id)).toEqual([roots[i].id]);
    }
  });

  it('POST /experiments: project_name, name and run-name filters and metadata_filter match literally', async () => {
    for (const [i, s] of INJECTIONS.entries()) {
      const list = async (body: object) => {
        const res = await post('/experiments', body);
        expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(200);
        return res
          .json()
          .map((e: { uuid: string }) => e.uuid)
          .sort();
      };
      const ids = (p: (e: (typeof experiments)[number]) => boolean) =>
        experiments
          .filter(p)
          .map((e) => e.uuid)
          .sort();
      const v = clean(s).toLowerCase();
      expect(await list({ project_name: s })).toEqual([experiments[i].uuid]);
      expect(await list({ metadata_filter: { [s]: s } })).toEqual([experiments[i].uuid]);
      expect(await list({ experiment_name_filter: s })).toEqual(ids((e) => e.name.toLowerCase().includes(v)));
      expect(await list({ run_name_filter: s })).toEqual(ids((e) => e.run_name.toLowerCase().includes(v)));
      expect(await list({ experiment_name_filter: s, run_name_filter: s, project_name: s })).toEqual(
        ids((e) => e.uuid === experiments[i].uuid && e.run_name.toLowerCase().includes(v)),
      );
    }
  });

  it('names in paths and bodies (datasets, prompts, deployments, provider keys, eval metrics) are data, never SQL', async () => {
    const get = (path: string) => call(gw.stack.app, attacker.key, 'GET', path);
    for (const s of INJECTIONS) {
      const segment = urlText(s);
      // A lone surrogate has no UTF-8 form: its percent-encoded bytes are no valid URL, refused before routing.
      const badUrl = !s.isWellFormed();
      const inPath = (status: number) => (badUrl ? 400 : status);
      const ds = datasets.find((d) => d.name === clean(s));
      const collection = await get(`/collection/${segment}`);
      expect(collection.statusCode, collection.body).toBe(inPath(200));
      if (ds && !badUrl) expect(collection.json()).toMatchObject({ id: ds.id, name: ds.name, column_names: ['q'] });
      const prompts = await get(`/prompts?name=${segment}`);
      // The query string's decoder is lenient with such bytes; whatever name it reads, it is matched literally.
      expect(prompts.statusCode, prompts.body).toBe(200);
      const promptNames = prompts.json().map((p: { name: string }) => p.name);
      if (badUrl) expect([[], [clean(s)]]).toContainEqual(promptNames);
      else expect(promptNames).toEqual([clean(s)]);
      const provider = /^[a-z0-9_-]{1,64}$/.test(s);
      for (const [method, path, body, status] of [
        ['POST', '/testcases', { name: s, test_cases: [{ inputs: { q: 'more' } }] }, 200],
        ['POST', '/deployed-prompt', { deployment_id: s }, 404],
        [
          'POST',
          '/deployments',
          { prompt_version_id: 1, deployment_id: s },
          /^[A-Za-z0-9_-]{1,64}$/.test(s) ? 404 : 422,
        ],
        ['POST', '/completion', { deployment_id: s }, 404],
        // Provider names are restricted to [a-z0-9_-]: the few strings that fit are saved, then deleted.
        ['POST', '/provider-keys', { provider: s, api_key: s }, provider ? 200 : 422],
        ['DELETE', `/provider-keys/${segment}`, undefined, inPath(provider ? 200 : 404)],
        ['DELETE', `/eval-metrics/${segment}`, undefined, inPath(422)],
        ['POST', '/eval-metrics', { name: s, type: 'contains', config: { value: s } }, 200],
        ['GET', `/trace_log/${segment}`, undefined, inPath(422)],
        ['GET', `/experiment/${segment}/stats`, undefined, inPath(422)],
        ['POST', `/update_test_case/${segment}/${segment}`, { target: s }, inPath(422)],
      ] as const) {
        const res = await call(gw.stack.app, attacker.key, method, path, body);
        expect(res.statusCode, `${method} ${path} ${JSON.stringify(body)}: ${res.body.slice(0, 200)}`).toBe(status);
        if (status >= 400 && status !== 422) expect(res.json()).toEqual({ detail: expect.any(String) });
      }
    }
    // The metrics were stored under their literal names.
    const metrics = (await get('/eval-metrics'))
      .json()
      .map((m: { name: string }) => m.name)
      .sort();
    expect(metrics).toEqual(INJECTIONS.map(clean).sort());
  });

  it('afterwards every table still exists, the victim’s rows are unchanged and the attacker’s earlier rows too', async () => {
    expect(await drainQueues(gw.stack)).toEqual([]);
    expect(await tables()).toEqual(tablesBefore);
    const victimAfter = (await tenantRows(sql, victim.orgId)).rows;
    expect(checksums(victimAfter)).toEqual(checksums(victimBefore));
    expect(missingRows(attackerBefore, (await tenantRows(sql, attacker.id)).rows)).toEqual({
      datasets: datasets.length,
    });
    // (The datasets' last_updated_at moved: POST /testcases above added a case to each, as it should.)
  });
});
