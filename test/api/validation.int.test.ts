import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }],
} = useStack({ env: { BODY_LIMIT_BYTES: String(64 * 1024) }, orgs: ['org'] });

function expectValidationError(res: { statusCode: number; json(): any }, loc: (string | number)[]) {
  expect(res.statusCode).toBe(422);
  const body = res.json();
  for (const d of body.detail) {
    expect(d).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  }
  expect(body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
}

describe('request validation', () => {
  it('answers malformed JSON with 422, not 500', async () => {
    const res = await call(stack.app, key, 'POST', '/trace_log', '{"trace_id": ');
    expectValidationError(res, ['body']);
    expect(res.json().detail[0].type).toBe('json_invalid');
  });
  it('answers a missing body with 422 at loc ["body"]', async () => {
    const res = await stack.app.inject({ method: 'POST', url: '/api/svc/v1/trace_log', headers: { 'x-api-key': key } });
    expectValidationError(res, ['body']);
  });
  it('answers an oversized body with 413', async () => {
    const res = await call(stack.app, key, 'POST', '/trace_log', { project_name: 'p', output: 'x'.repeat(100 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json().detail).toMatch(/too large/);
  });
  it('names the field of a wrong type, a malformed id, a missing project and a bad timestamp', async () => {
    expectValidationError(await call(stack.app, key, 'POST', '/trace_log', { project_name: 'p', tags: 'not-a-list' }), [
      'body',
      'tags',
    ]);
    expectValidationError(
      await call(stack.app, key, 'POST', '/trace_log', { project_name: 'p', parent_trace_id: 'abc' }),
      ['body', 'parent_trace_id'],
    );
    expectValidationError(await call(stack.app, key, 'POST', '/trace_log', { trace_id: randomUUID() }), [
      'body',
      'project_name',
    ]);
    expectValidationError(
      await call(stack.app, key, 'POST', '/trace_log', { project_name: 'p', start_timestamp: 'yesterday' }),
      ['body', 'start_timestamp'],
    );
    expectValidationError(
      await call(stack.app, key, 'POST', '/trace_log', { project_name: 'p', log_sample_rate: 1.5 }),
      ['body', 'log_sample_rate'],
    );
    expectValidationError(await call(stack.app, key, 'GET', '/trace_log/not-a-uuid'), ['path', 'trace_id']);
  });
  it('answers an update with an unknown field or a wrongly typed value with 422', async () => {
    const trace_id = randomUUID();
    expectValidationError(
      await call(stack.app, key, 'PUT', '/trace_log', { trace_id, field_name_to_value_map: { no_such_field: 1 } }),
      ['body', 'field_name_to_value_map', 'no_such_field'],
    );
    expectValidationError(
      await call(stack.app, key, 'PUT', '/trace_log', { trace_id, field_name_to_value_map: { latency: 'slow' } }),
      ['body', 'field_name_to_value_map', 'latency'],
    );
  });
  it('answers a feedback score outside 0..1 with 422', async () => {
    expectValidationError(await call(stack.app, key, 'POST', '/feedback', { trace_id: randomUUID(), score: 1.01 }), [
      'body',
      'score',
    ]);
    expectValidationError(await call(stack.app, key, 'POST', '/feedback', { trace_id: randomUUID(), score: -0.1 }), [
      'body',
      'score',
    ]);
  });
  it('refuses values the store cannot hold with 422, never a 500', async () => {
    const long = 'x'.repeat(3000);
    const cases: [object, (string | number)[]][] = [
      [{ project_name: 'p', depth: 2 ** 31 }, ['body', 'depth']],
      [{ project_name: 'p', execution_order: 2 ** 40 }, ['body', 'execution_order']],
      [{ project_name: 'p', trace_name: long }, ['body', 'trace_name']],
      [{ project_name: 'p', tags: [long] }, ['body', 'tags', 0]],
      [{ project_name: 'p', session_id: long }, ['body', 'session_id']],
      [{ project_name: long }, ['body', 'project_name']],
      // The model is indexed with the trace's sums: a random 3000-character name would not fit the index row.
      [{ project_name: 'p', configuration: { model: long } }, ['body', 'configuration', 'model']],
    ];
    for (const [body, loc] of cases) expectValidationError(await call(stack.app, key, 'POST', '/trace_log', body), loc);
    // Nor may a completion or a prompt name such a model: their logs are spans too.
    expectValidationError(
      await call(stack.app, key, 'POST', '/completion', {
        project_name: 'p',
        llm_configuration: { provider: 'openai', model: long, messages: [{ role: 'user', content: 'hi' }] },
      }),
      ['body', 'llm_configuration', 'model'],
    );
    expectValidationError(
      await call(stack.app, key, 'PUT', '/trace_log', {
        trace_id: randomUUID(),
        field_name_to_value_map: { depth: 2 ** 31 },
      }),
      ['body', 'field_name_to_value_map', 'depth'],
    );
    expectValidationError(await call(stack.app, key, 'POST', '/get_trace_logs', { page: Number.MAX_SAFE_INTEGER }), [
      'body',
      'page',
    ]);
  });
  it('refuses JSON nested too deeply to store, with 422', async () => {
    const deep = '{"project_name":"p","metadata":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5000) + '}';
    expectValidationError(await call(stack.app, key, 'POST', '/trace_log', deep), ['body']);
    const fine = '{"project_name":"p","metadata":' + '{"a":'.repeat(50) + '"[[[{{{"' + '}'.repeat(50) + '}';
    expect((await call(stack.app, key, 'POST', '/trace_log', fine)).statusCode).toBe(200);
  });
  it('refuses chain-framework runs it cannot store with 422 in the validation shape', async () => {
    const run = (extra: object) => ({ id: randomUUID(), name: 'r', run_type: 'chain', project_name: 'p', ...extra });
    expectValidationError(
      await call(stack.app, key, 'POST', '/trace_log/chainlib', run({ start_time: -62200000000000 })),
      ['body', 'start_time'],
    );
    expectValidationError(await call(stack.app, key, 'POST', '/trace_log/chainlib', run({ start_time: 8e15 })), [
      'body',
      'start_time',
    ]);
    expectValidationError(await call(stack.app, key, 'POST', '/trace_log/chainlib', run({ name: 'n'.repeat(3000) })), [
      'body',
      'runs',
      0,
      'trace_name',
    ]);
    expectValidationError(
      await call(stack.app, key, 'POST', '/trace_log/chainlib', { id: randomUUID(), name: 'no project' }),
      ['body', 'project_name'],
    );
  });
  it('answers a malformed URL with 400 in the detail shape', async () => {
    const res = await stack.app.inject({ url: '/api/svc/v1/trace_log/%E0%A4%A', headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.any(String) });
  });
  it('ignores unknown fields, and stores strings holding NUL characters and lone surrogates', async () => {
    const trace_id = randomUUID();
    const res = await call(stack.app, key, 'POST', '/trace_log', {
      trace_id,
      project_name: 'p',
      some_future_field: { x: 1 },
      output: 'a\u0000b',
      metadata: { 'k\u0000ey': 'v\ud800' },
      inputs: { q: 'x\u0000' },
    });
    expect(res.statusCode).toBe(200);
    const read = await readTrace(stack.app, key, trace_id);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ output: 'ab', metadata: { key: 'v\ufffd' }, inputs: { q: 'x' } });
    expect(read.json()).not.toHaveProperty('some_future_field');
  });
});
