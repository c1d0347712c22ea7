import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { unitHash } from '@sightline/core';
import { queues } from '@sightline/queues';
import { sleep } from '../fakes/fake-server';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';

const {
  gw,
  sql,
  orgs: [org, { key: otherKey }],
} = useGateway({ env: { PROVIDER_MAX_RETRIES: '0' }, orgs: ['org', 'org'] });
const { key } = org;

beforeAll(async () => {
  for (const metric of [
    { name: 'exact', type: 'exact_match' },
    { name: 'has-paris', type: 'contains', config: { value: 'Paris' } },
    { name: 'close', type: 'levenshtein' },
    {
      name: 'judge',
      type: 'llm_judge',
      config: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        prompt_template: '{"score": 0.75, "reason": "judged {{output}} against {{target}}"}',
      },
    },
    {
      name: 'mute-judge',
      type: 'llm_judge',
      config: { provider: 'openai', model: 'gpt-4o-mini', prompt_template: 'no number here for {{output}}' },
    },
  ]) {
    expect((await call(gw.stack.app, key, 'POST', '/eval-metrics', metric)).statusCode).toBe(200);
  }
});

const post = (path: string, body: unknown, k = key) => call(gw.stack.app, k, 'POST', path, body);

/** Reads the span until `ready` holds (for at most 15 s): evaluations run after the span is written. */
const eventually = (id: string, ready: (span: any) => boolean, k = key) =>
  vi.waitFor(
    async () => {
      const span = (await readTrace(gw.stack.app, k, id)).json();
      if (!ready(span)) throw new Error(`span ${id} never got there`);
      return span;
    },
    { timeout: 15_000, interval: 100 },
  );
const scoreNames = (span: { scores: { name: string }[] | null }) => (span.scores ?? []).map((s) => s.name).sort();

describe('eval metrics', () => {
  it('are created, listed and deleted per organization, with their config checked', async () => {
    const created = (
      await post('/eval-metrics', { name: 'temp', type: 'regex_match', config: { pattern: '^a' } })
    ).json();
    expect(created).toMatchObject({
      id: expect.any(Number),
      name: 'temp',
      type: 'regex_match',
      config: { pattern: '^a' },
    });
    expect((await post('/eval-metrics', { name: 'temp', type: 'json_valid' })).statusCode).toBe(409);
    expect(
      (await post('/eval-metrics', { name: 'bad-re', type: 'regex_match', config: { pattern: '(' } })).statusCode,
    ).toBe(422);
    const backref = await post('/eval-metrics', {
      name: 'backref',
      type: 'regex_match',
      config: { pattern: '(a)\\1' },
    });
    expect(backref.statusCode).toBe(422);
    expect(backref.json().detail[0]).toMatchObject({
      loc: ['body', 'config', 'pattern'],
      msg: expect.stringMatching(/RE2.*backreferences/),
    });
    const flags = await post('/eval-metrics', {
      name: 'flags',
      type: 'regex_match',
      config: { pattern: 'a', flags: 'g' },
    });
    expect(flags.statusCode).toBe(422);
    expect(flags.json().detail[0].loc).toEqual(['body', 'config', 'flags']);
    const lookbehind = await post('/eval-metrics', {
      name: 'lookbehind',
      type: 'json_schema',
      config: { schema: { patternProperties: { '(?<=a)b': { type: 'number' } } } },
    });
    expect(lookbehind.statusCode).toBe(422);
    expect(lookbehind.json().detail[0].loc).toEqual(['body', 'config', 'schema']);
    expect(
      (await post('/eval-metrics', { name: 'bad-schema', type: 'json_schema', config: { schema: { type: 'nope' } } }))
        .statusCode,
    ).toBe(422);
    expect((await post('/eval-metrics', { name: 'no-type', type: 'vibes' })).statusCode).toBe(422);
    const longProvider = await post('/eval-metrics', {
      name: 'long-provider',
      type: 'llm_judge',
      config: { provider: 'p'.repeat(65), model: 'gpt-4o-mini', prompt_template: 'judge {{output}}' },
    });
    expect(longProvider.statusCode).toBe(422);
    expect(longProvider.json().detail[0].loc).toEqual(['body', 'config', 'provider']);
    expect((await call(gw.stack.app, otherKey, 'GET', '/eval-metrics')).json()).toEqual([]);
    expect((await call(gw.stack.app, otherKey, 'DELETE', `/eval-metrics/${created.id}`)).statusCode).toBe(404);
    expect((await call(gw.stack.app, key, 'DELETE', `/eval-metrics/${created.id}`)).statusCode).toBe(200);
    expect(
      (await call(gw.stack.app, key, 'GET', '/eval-metrics')).json().map((m: { name: string }) => m.name),
    ).not.toContain('temp');
  });
});

describe('running evaluations', () => {
  it('scores a trace that names metrics, records unknown ones, and the scores are filterable', async () => {
    const project = `evals-${randomUUID()}`;
    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: project,
      output: 'Paris',
      target: 'Paris',
      evaluation_metric_names: ['exact', 'has-paris', 'close', 'nonexistent'],
      scores: [{ name: 'mine', score: 0.1 }],
    });
    const span = await eventually(id, (s) => scoreNames(s).includes('exact'));
    expect(scoreNames(span)).toEqual(['close', 'exact', 'has-paris', 'mine']);
    expect(span.scores).toContainEqual({ name: 'exact', score: 1, reason: 'output equals the target' });
    expect(span.metadata.sightline_eval_errors).toEqual({ nonexistent: "unknown eval metric 'nonexistent'" });
    const listed = (
      await post('/get_trace_logs', {
        project_name: project,
        filter_field: 'score:exact',
        filter_operator: 'equals',
        filter_value: '1',
      })
    ).json();
    expect(listed.total).toBe(1);
  });

  it('evaluates output_for_eval_metrics in place of the output, and only once the span has ended', async () => {
    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: 'evals',
      target: 'yes',
      evaluation_metric_names: ['exact'],
    });
    await sleep(300);
    expect((await readTrace(gw.stack.app, key, id)).json().scores).toEqual([]);
    await call(gw.stack.app, key, 'PUT', '/trace_log', {
      trace_id: id,
      field_name_to_value_map: { output: 'long text', output_for_eval_metrics: 'yes' },
    });
    const span = await eventually(id, (s) => scoreNames(s).includes('exact'));
    expect(span.scores).toContainEqual(expect.objectContaining({ name: 'exact', score: 1 }));
  });

  it('samples evaluations with apply_eval_frac', async () => {
    const none = randomUUID(),
      all = randomUUID();
    await post('/trace_log', {
      trace_id: none,
      project_name: 'evals',
      output: 'a',
      target: 'a',
      evaluation_metric_names: ['exact'],
      apply_eval_frac: 0,
    });
    await post('/trace_log', {
      trace_id: all,
      project_name: 'evals',
      output: 'a',
      target: 'a',
      evaluation_metric_names: ['exact'],
      apply_eval_frac: 1,
    });
    await eventually(all, (s) => scoreNames(s).includes('exact'));
    await sleep(200);
    expect((await readTrace(gw.stack.app, key, none)).json().scores).toEqual([]);
  });

  it('samples deterministically per trace id at fractional rates', async () => {
    const ids = Array.from({ length: 30 }, () => randomUUID());
    await Promise.all(
      ids.map((trace_id) =>
        post('/trace_log', {
          trace_id,
          project_name: 'evals',
          output: 'a',
          target: 'a',
          evaluation_metric_names: ['exact'],
          apply_eval_frac: 0.5,
        }),
      ),
    );
    const expected = ids.filter((id) => unitHash(`eval:${id}`) < 0.5);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(ids.length);
    for (const id of expected) await eventually(id, (s) => scoreNames(s).includes('exact'));
    await sleep(200);
    for (const id of ids.filter((x) => !expected.includes(x)))
      expect((await readTrace(gw.stack.app, key, id)).json().scores, id).toEqual([]);
  });

  it("never runs another organization's metric", async () => {
    const id = randomUUID();
    await post(
      '/trace_log',
      { trace_id: id, project_name: 'evals', output: 'Paris', target: 'Paris', evaluation_metric_names: ['exact'] },
      otherKey,
    );
    const span = await eventually(id, (s) => s.metadata?.sightline_eval_errors, otherKey);
    expect(span.metadata.sightline_eval_errors).toEqual({ exact: "unknown eval metric 'exact'" });
    expect(span.scores).toEqual([]);
  });

  it('does not duplicate a score when an eval job runs again', async () => {
    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: 'evals',
      output: 'x',
      target: 'y',
      evaluation_metric_names: ['exact'],
    });
    const first = await eventually(id, (s) => scoreNames(s).includes('exact'));
    const org = (await sql`select organization_id from spans where trace_id = ${id}`)[0].organization_id;
    const producer = (await import('@sightline/queues')).createProducer('eval', gw.stack.app.redis, gw.stack.prefix);
    await producer.add({ organization_id: org, trace_id: id, metric_names: ['exact'], pending_member: 'manual' });
    await producer.add({ organization_id: org, trace_id: id, metric_names: ['exact'], pending_member: 'manual-2' });
    await producer.close();
    await sleep(500);
    const again = (await readTrace(gw.stack.app, key, id)).json();
    expect(again.scores.filter((s: { name: string }) => s.name === 'exact')).toHaveLength(1);
    expect(again.scores).toEqual(first.scores);
  });

  it('runs patterns in linear time and bounds the depth a schema is checked to, recording what cannot run', async () => {
    for (const metric of [
      { name: 'backtracker', type: 'regex_match', config: { pattern: '^(a|a)+$' } },
      {
        name: 'nested',
        type: 'json_schema',
        config: { schema: { $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' } },
      },
    ])
      expect((await post('/eval-metrics', metric)).statusCode).toBe(200);
    // Saved before patterns were checked against RE2, which cannot run it: the evaluation says so.
    await sql`insert into eval_metrics (organization_id, name, type, config)
      values (${org.id}, 'legacy-backref', 'regex_match', ${sql.json({ pattern: '(a)\\1' })})`;
    const backtracked = randomUUID(),
      deep = randomUUID();
    // A backtracking engine takes about a minute on this output, blocking the worker meanwhile.
    await post('/trace_log', {
      trace_id: backtracked,
      project_name: 'evals',
      output: `${'a'.repeat(32)}!`,
      evaluation_metric_names: ['backtracker', 'legacy-backref'],
    });
    await post('/trace_log', {
      trace_id: deep,
      project_name: 'evals',
      output: '['.repeat(400_000) + ']'.repeat(400_000),
      evaluation_metric_names: ['nested'],
    });
    const span = await eventually(backtracked, (s) => scoreNames(s).includes('backtracker'));
    expect(span.scores).toContainEqual({ name: 'backtracker', score: 0, reason: '/^(a|a)+$/ does not match' });
    expect(span.metadata.sightline_eval_errors['legacy-backref']).toMatch(/RE2.*backreferences/);
    const deepSpan = await eventually(deep, (s) => scoreNames(s).includes('nested'));
    expect(deepSpan.scores).toContainEqual({
      name: 'nested',
      score: 0,
      reason: 'output nests deeper than 256 levels',
    });
  });

  it('runs an llm_judge through the gateway, logged as a child completion, and records an unparseable answer as an error', async () => {
    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: 'evals',
      output: 'Lyon',
      target: 'Paris',
      evaluation_metric_names: ['judge', 'mute-judge'],
    });
    const span = await eventually(
      id,
      (s) => scoreNames(s).includes('judge') && s.metadata?.sightline_eval_errors?.['mute-judge'],
    );
    expect(span.scores).toContainEqual({ name: 'judge', score: 0.75, reason: 'judged Lyon against Paris' });
    expect(scoreNames(span)).not.toContain('mute-judge');
    expect(span.metadata.sightline_eval_errors['mute-judge']).toMatch(/no score/);
    // The answer without a score was asked again on each of the eval job's attempts, every call logged (the
    // last call's log may land just after the error).
    const judgesOf = (s: { children: { trace_name: string }[] }) =>
      s.children.filter((c) => c.trace_name.startsWith('eval-'));
    const calls = (s: { children: { trace_name: string }[] }, name: string) =>
      judgesOf(s).filter((c) => c.trace_name === name).length;
    const logged = await eventually(id, (s) => calls(s, 'eval-mute-judge') === queues.eval.options.attempts);
    expect(calls(logged, 'eval-judge')).toBe(1);
    const judges = judgesOf(span) as { trace_name: string; cost: number }[];
    judges.sort((a: { trace_name: string }, b: { trace_name: string }) => a.trace_name.localeCompare(b.trace_name));
    expect(judges[0]).toMatchObject({
      parent_trace_id: id,
      depth: 1,
      configuration: { provider: 'openai', model: 'gpt-4o-mini' },
    });
    expect(judges[0].cost).toBeGreaterThan(0);
  });

  it("calls a judge with its model parameters under either the API's or the provider's names, and refuses unknown ones", async () => {
    const judge = (name: string, model_params: Record<string, unknown>) => ({
      name,
      type: 'llm_judge',
      config: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        model_params,
        prompt_template: `{"score": 1, "reason": "${name} saw {{output}}"}`,
      },
    });
    const unknown = await post('/eval-metrics', judge('odd-judge', { temprature: 0 }));
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail[0].loc).toEqual(['body', 'config', 'model_params', 'temprature']);
    for (const [name, params] of [
      ['cold-judge', { temperature: 0, max_tokens: 7 }],
      ['api-judge', { temp: 0.3, max_length: 9 }],
    ] as const)
      expect((await post('/eval-metrics', judge(name, params))).statusCode).toBe(200);

    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: 'evals',
      output: 'snow',
      evaluation_metric_names: ['cold-judge', 'api-judge'],
    });
    await eventually(id, (s) => scoreNames(s).includes('cold-judge') && scoreNames(s).includes('api-judge'));
    const sent = (name: string) =>
      gw.openai.requests.find((r) => JSON.stringify(r.body).includes(`${name} saw snow`))!.body as any;
    expect(sent('cold-judge')).toMatchObject({ temperature: 0, max_tokens: 7 });
    expect(sent('api-judge')).toMatchObject({ temperature: 0.3, max_tokens: 9 });
  });

  it('runs a judge that names a route as its model through the route', async () => {
    const route = {
      name: 'judges',
      strategy: 'fallback',
      targets: [
        { provider: 'openai', model: 'gpt-4o-mini' },
        { provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
      ],
    };
    expect((await post('/routes', route)).statusCode).toBe(200);
    const metric = {
      name: 'routed-judge',
      type: 'llm_judge',
      config: {
        provider: 'openai',
        model: 'route:judges',
        prompt_template: '{"score": 0.5, "reason": "routed {{output}}"}',
      },
    };
    expect((await post('/eval-metrics', metric)).statusCode).toBe(200);
    gw.openai.plan({ status: 500 });
    const id = randomUUID();
    await post('/trace_log', {
      trace_id: id,
      project_name: 'evals',
      output: 'o',
      evaluation_metric_names: ['routed-judge'],
    });
    const span = await eventually(id, (s) => scoreNames(s).includes('routed-judge'));
    expect(span.scores).toContainEqual({ name: 'routed-judge', score: 0.5, reason: 'routed o' });
    const judge = span.children.find((c: { trace_name: string }) => c.trace_name === 'eval-routed-judge');
    expect(judge.configuration).toMatchObject({ provider: 'anthropic' });
  });

  it('retries a judge whose provider fails, then records its last error', async () => {
    gw.openai.plan({ status: 503 }, 5); // one request per attempt (no SDK retries here), five attempts
    const id = randomUUID();
    await post('/trace_log', { trace_id: id, project_name: 'evals', output: 'o', evaluation_metric_names: ['judge'] });
    const span = await eventually(id, (s) => s.metadata?.sightline_eval_errors?.judge);
    expect(span.metadata.sightline_eval_errors.judge).toMatch(/HTTP 503/);
    expect(
      gw.openai.requests.filter((r) => JSON.stringify(r.body).includes('judged o against')).length,
    ).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('scores a completion that names eval metrics by id', async () => {
    const [exact] = (await call(gw.stack.app, key, 'GET', '/eval-metrics'))
      .json()
      .filter((m: { name: string }) => m.name === 'has-paris');
    const res = (
      await post('/completion', {
        llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage('Paris')] },
        eval_metric_ids: [exact.id],
      })
    ).json();
    const span = await eventually(res.trace_id, (s) => scoreNames(s).includes('has-paris'));
    expect(span.scores).toContainEqual(expect.objectContaining({ name: 'has-paris', score: 1 }));
    expect(
      (
        await post('/completion', {
          llm_configuration: { model: 'gpt-4o-mini', messages: [userMessage('x')] },
          eval_metric_ids: [987654],
        })
      ).statusCode,
    ).toBe(422);
  });

  it('counts eval scores in an experiment finished right after its traces', async () => {
    const project = (await post('/project', { name: `evals-exp-${randomUUID()}` })).json();
    const exp = (await post('/experiment', { name: 'with-evals', project_uuid: project.uuid })).json();
    // A slow judge makes every evaluation outlast the span writes: the finish must wait for all of them.
    gw.openai.responseDelayMs = 300;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post('/trace_log', {
          project_uuid: project.uuid,
          experiment_uuid: exp.uuid,
          output: 'a',
          target: i % 2 ? 'a' : 'b',
          evaluation_metric_names: ['judge', 'exact'],
        }),
      ),
    );
    const finished = await post(`/experiment/${exp.uuid}/finished`, {});
    gw.openai.responseDelayMs = 0;
    expect(finished.statusCode).toBe(200);
    const stats = finished.json().parent_trace_stats;
    expect(stats).toHaveLength(20);
    expect(stats.every((s: { scores: { name: string }[] }) => s.scores.some((x) => x.name === 'exact'))).toBe(true);
    const [listed] = (await post('/experiments', { experiment_uuids: [exp.uuid] })).json();
    expect(listed.pinned_stats).toContainEqual({ var1: 'exact', operation: 'mean', value: 0.5 });
    expect(listed.pinned_stats).toContainEqual({ var1: 'judge', operation: 'mean', value: 0.75 });
  });
});
