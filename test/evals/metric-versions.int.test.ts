import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// A metric's configuration edited as a new version: the versions before kept, and each result written by
// the worker keeping the version that made it.

const {
  stack,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ orgs: ['versions', 'versions-other'] });

const send = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, k = key) =>
  call(stack.app, k, method, path, body);

let member: string;
let viewer: string;

beforeAll(async () => {
  await stack.startWorker();
  member = (await send('POST', '/api-keys', { role: 'member', label: 'mia' })).json().key;
  viewer = (await send('POST', '/api-keys', { role: 'viewer', label: 'vera' })).json().key;
});

const createMetric = async (body: unknown) => {
  const res = await send('POST', '/eval-metrics', body);
  expect(res.statusCode).toBe(200);
  return res.json() as { id: number; version: number };
};

/** The span's evaluation results once `name` is among them (evaluations run after the span is written). */
const resultsOnceScored = (id: string, name: string) =>
  vi.waitFor(
    async () => {
      const res = await send('GET', `/span/${id}/eval-results`);
      const results = res.statusCode === 200 ? res.json() : {};
      if (!(name in results)) throw new Error(`span ${id} not scored by ${name} yet`);
      return results;
    },
    { timeout: 15_000, interval: 100 },
  );

const logSpan = async (output: string, metric: string) => {
  const id = randomUUID();
  const res = await send('POST', '/trace_log', {
    trace_id: id,
    project_name: 'versions',
    output,
    evaluation_metric_names: [metric],
  });
  expect(res.statusCode).toBe(200);
  return id;
};

describe('editing an eval metric', () => {
  it('makes a new version, keeps the old ones, and results keep the version that made them', async () => {
    const metric = await createMetric({ name: 'says-paris', type: 'contains', config: { value: 'Paris' } });
    expect(metric.version).toBe(1);

    const first = await logSpan('Paris', 'says-paris');
    expect((await resultsOnceScored(first, 'says-paris'))['says-paris']).toMatchObject({ score: 1, metric_version: 1 });

    const edited = await send('PATCH', `/eval-metrics/${metric.id}`, { type: 'contains', config: { value: 'London' } });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ id: metric.id, name: 'says-paris', version: 2, config: { value: 'London' } });
    expect((await send('GET', `/eval-metrics/${metric.id}`)).json()).toMatchObject({
      version: 2,
      config: { value: 'London' },
    });
    expect(
      (await send('GET', `/eval-metrics/${metric.id}/versions`))
        .json()
        .map((v: { version: number; config: unknown }) => [v.version, v.config]),
    ).toEqual([
      [2, { value: 'London' }],
      [1, { value: 'Paris' }],
    ]);

    // The score version 1 wrote still says version 1; a new span is scored by version 2.
    expect((await send('GET', `/span/${first}/eval-results`)).json()).toEqual({
      'says-paris': { score: 1, reason: '"Paris" found in the output', metric_version: 1 },
    });
    const second = await logSpan('Paris', 'says-paris');
    expect((await resultsOnceScored(second, 'says-paris'))['says-paris']).toMatchObject({
      score: 0,
      metric_version: 2,
    });

    // What the official clients read is unchanged: a score is a name, a score and a reason.
    const read = (await readTrace(stack.app, key, second)).json();
    expect(read.scores).toEqual([{ name: 'says-paris', score: 0, reason: expect.any(String) }]);
  });

  it('adds no version when the configuration is the same', async () => {
    const metric = await createMetric({ name: 'same', type: 'exact_match', config: { case_sensitive: false } });
    const again = await send('PATCH', `/eval-metrics/${metric.id}`, {
      type: 'exact_match',
      config: { case_sensitive: false },
    });
    expect(again.json().version).toBe(1);
    expect((await send('GET', `/eval-metrics/${metric.id}/versions`)).json()).toHaveLength(1);
  });

  it('answers 422 for a bad configuration, as creating does, and for a change of type', async () => {
    const metric = await createMetric({ name: 'pattern', type: 'regex_match', config: { pattern: '^a' } });
    const path = `/eval-metrics/${metric.id}`;
    const backref = await send('PATCH', path, { type: 'regex_match', config: { pattern: '(a)\\1' } });
    expect(backref.statusCode).toBe(422);
    expect(backref.json().detail[0]).toMatchObject({
      loc: ['body', 'config', 'pattern'],
      msg: expect.stringMatching(/RE2.*backreferences/),
    });
    const missing = await send('PATCH', path, { type: 'regex_match', config: {} });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0].loc).toEqual(['body', 'config', 'pattern']);
    const retyped = await send('PATCH', path, { type: 'json_valid', config: {} });
    expect(retyped.statusCode).toBe(422);
    expect(retyped.json().detail).toEqual([
      { loc: ['body', 'type'], msg: expect.stringContaining('cannot change (it is regex_match)'), type: 'value_error' },
    ]);
    const schema = await createMetric({ name: 'shape', type: 'json_schema', config: { schema: { type: 'object' } } });
    const badSchema = await send('PATCH', `/eval-metrics/${schema.id}`, {
      type: 'json_schema',
      config: { schema: { type: 'nope' } },
    });
    expect(badSchema.statusCode).toBe(422);
    expect(badSchema.json().detail[0].loc).toEqual(['body', 'config', 'schema']);
    expect((await send('GET', `${path}/versions`)).json()).toHaveLength(1);
  });

  it('is for members and admins; viewers read the versions', async () => {
    const metric = await createMetric({ name: 'roles', type: 'contains', config: { value: 'a' } });
    const path = `/eval-metrics/${metric.id}`;
    expect((await send('PATCH', path, { type: 'contains', config: { value: 'b' } }, viewer)).statusCode).toBe(403);
    const byMember = await send('PATCH', path, { type: 'contains', config: { value: 'c' } }, member);
    expect(byMember.statusCode).toBe(200);
    expect(byMember.json().version).toBe(2);
    expect((await send('GET', path, undefined, viewer)).json().version).toBe(2);
    expect((await send('GET', `${path}/versions`, undefined, viewer)).json()).toHaveLength(2);
  });

  it("never shows or edits another organization's metric or results", async () => {
    const metric = await createMetric({ name: 'private', type: 'contains', config: { value: 'secret' } });
    const path = `/eval-metrics/${metric.id}`;
    expect((await send('PATCH', path, { type: 'contains', config: { value: 'x' } }, otherKey)).statusCode).toBe(404);
    expect((await send('GET', path, undefined, otherKey)).statusCode).toBe(404);
    expect((await send('GET', `${path}/versions`, undefined, otherKey)).statusCode).toBe(404);
    const span = await logSpan('secret', 'private');
    await resultsOnceScored(span, 'private');
    expect((await send('GET', `/span/${span}/eval-results`, undefined, otherKey)).statusCode).toBe(404);
    expect((await send('GET', path)).json()).toMatchObject({ version: 1, config: { value: 'secret' } });
  });
});
