import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { unitHash } from '@sightline/core';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ orgs: ['a', 'b'] });

const post = (body: unknown, k = key) => call(stack.app, k, 'POST', '/trace_log', body);
const get = (id: string, k = key) => readTrace(stack.app, k, id);

describe('POST /project', () => {
  it('creates or gets a project by name', async () => {
    const first = await call(stack.app, key, 'POST', '/project', { name: 'alpha' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      uuid: expect.any(String),
      name: 'alpha',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      was_created: true,
    });
    const again = await call(stack.app, key, 'POST', '/project', { name: 'alpha' });
    expect(again.json()).toMatchObject({ uuid: first.json().uuid, was_created: false });
    const elsewhere = await call(stack.app, otherKey, 'POST', '/project', { name: 'alpha' });
    expect(elsewhere.json()).toMatchObject({ was_created: true });
    expect(elsewhere.json().uuid).not.toBe(first.json().uuid);
  });
  it('is race-safe: 20 concurrent calls create one project and one says was_created', async () => {
    const name = `race-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => call(stack.app, key, 'POST', '/project', { name })),
    );
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    expect(new Set(results.map((r) => r.json().uuid)).size).toBe(1);
    expect(results.filter((r) => r.json().was_created)).toHaveLength(1);
  });
});

describe('trace-log write and read', () => {
  it('stores a span and answers it by id with computed fields and wire timestamps', async () => {
    const trace_id = randomUUID();
    const res = await post({
      trace_id,
      project_name: 'write-read',
      trace_name: 'root',
      inputs: { question: 'q' },
      output: 'answer',
      start_timestamp: '2026-01-02T03:04:05.678Z',
      end_timestamp: '2026-01-02 03:04:07',
      status: 'success',
      configuration: { model: 'gpt-4o', provider: 'openai', messages: [{ role: 'user', content: 'hi' }] },
      metadata: { env: 'test' },
      tags: ['t1'],
      input_tokens: 10,
      output_tokens: 5,
      cost: 0.001,
      scores: [{ name: 'accuracy', score: 0.9, reason: 'close' }],
      organization_id: 'forged',
    });
    expect(res.statusCode).toBe(200);
    // Read-your-writes: the 200 above is enough; no sleep.
    const span = (await get(trace_id)).json();
    expect(span).toMatchObject({
      trace_id,
      root_trace_id: trace_id,
      parent_trace_id: trace_id,
      trace_name: 'root',
      project_name: 'write-read',
      start_timestamp: '2026-01-02 03:04:05',
      end_timestamp: '2026-01-02 03:04:07',
      latency: 1.322,
      total_tokens: 15,
      depth: 0,
      execution_order: 0,
      children: [],
      children_ids: [],
      scores: [{ name: 'accuracy', score: 0.9, reason: 'close' }],
    });
    expect(span.organization_id).not.toBe('forged');
    const [stored] = await sql`select start_ts::text as start from spans where trace_id = ${trace_id}`;
    expect(stored.start).toBe('2026-01-02 03:04:05.678+00');
  });

  it('applies updates and feedback, found by trace_id or inference_id', async () => {
    const trace_id = randomUUID();
    await post({ trace_id, project_name: 'updates', status: 'success' });
    const upd = await call(stack.app, key, 'PUT', '/trace_log', {
      trace_id,
      root_trace_id: trace_id,
      field_name_to_value_map: { status: 'error', error: 'stack trace', output: 'late output' },
    });
    expect(upd.statusCode).toBe(200);
    expect(
      (
        await call(stack.app, key, 'POST', '/feedback', {
          inference_id: trace_id,
          score: 0.25,
          name: 'meh',
          target: 'gold',
        })
      ).statusCode,
    ).toBe(200);
    const span = (await get(trace_id)).json();
    expect(span).toMatchObject({
      status: 'error',
      error: 'stack trace',
      output: 'late output',
      feedback_score: 0.25,
      feedback_comment: 'meh',
      target: 'gold',
    });
  });

  it("answers 404 for an unknown id and for another organization's span, which it never changes", async () => {
    const trace_id = randomUUID();
    await post({ trace_id, project_name: 'private', output: 'mine' });
    expect((await get(randomUUID())).statusCode).toBe(404);
    const foreign = await get(trace_id, otherKey);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: 'trace log not found' });
    await call(stack.app, otherKey, 'PUT', '/trace_log', { trace_id, field_name_to_value_map: { output: 'hijacked' } });
    await call(stack.app, otherKey, 'POST', '/feedback', { trace_id, score: 0 });
    expect((await get(trace_id)).json()).toMatchObject({ output: 'mine', feedback_score: null });
    expect((await get(trace_id, otherKey)).statusCode).toBe(404);
  });

  it('rejects a project_uuid of another organization with 404', async () => {
    const project = (await call(stack.app, key, 'POST', '/project', { name: 'owned' })).json();
    const res = await post({ project_uuid: project.uuid, trace_id: randomUUID() }, otherKey);
    expect(res.statusCode).toBe(404);
  });

  it('returns the subtree with nested children in execution order, and computes depth and order', async () => {
    const root = randomUUID(),
      a = randomUUID(),
      b = randomUUID(),
      a1 = randomUUID();
    const t = (s: number) => `2026-03-01T00:00:0${s}Z`;
    // Children first, the root last: arrival order does not matter.
    await post({ trace_id: a1, root_trace_id: root, parent_trace_id: a, project_name: 'tree', start_timestamp: t(2) });
    await post({
      trace_id: b,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: 'tree',
      start_timestamp: t(3),
    });
    await post({
      trace_id: a,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: 'tree',
      start_timestamp: t(1),
      children: [a1],
    });
    await post({ trace_id: root, project_name: 'tree', start_timestamp: t(0) });
    const tree = (await get(root)).json();
    expect(tree.children_ids).toEqual([a, b]);
    expect(tree.children[0]).toMatchObject({ trace_id: a, depth: 1, execution_order: 1, children_ids: [a1] });
    expect(tree.children[0].children[0]).toMatchObject({ trace_id: a1, depth: 2, execution_order: 2 });
    expect(tree.children[1]).toMatchObject({ trace_id: b, depth: 1, execution_order: 3 });
    const sub = (await get(a)).json();
    expect(sub.children_ids).toEqual([a1]);
  });

  it('assembles a trace of thousands of spans (on the thread pool) into the right tree', async () => {
    // A LangChain run tree: a root with 50 chains of 60 nested runs each, 3001 spans in all.
    const project = (await call(stack.app, key, 'POST', '/project', { name: 'big' })).json();
    const root = {
      id: randomUUID(),
      name: 'root',
      run_type: 'chain',
      project_uuid: project.uuid,
      child_runs: [] as object[],
    };
    const leaves: string[] = [];
    for (let branch = 0; branch < 50; branch++) {
      let node: { child_runs: object[] } = root;
      for (let level = 0; level < 60; level++) {
        const child = {
          id: randomUUID(),
          name: `b${branch}-l${level}`,
          run_type: 'tool',
          execution_order: branch,
          child_runs: [] as object[],
        };
        node.child_runs.push(child);
        node = child;
        if (level === 59) leaves.push(child.id);
      }
    }
    expect((await call(stack.app, key, 'POST', '/trace_log/chainlib', root)).statusCode).toBe(200);
    const pooled = stack.app.pool.completedTasks();
    const tree = (await get(root.id)).json();
    expect(stack.app.pool.completedTasks()).toBe(pooled + 1);
    expect(tree.children).toHaveLength(50);
    let node = tree.children[7];
    for (let level = 1; level < 60; level++) node = node.children[0];
    expect(node).toMatchObject({ trace_id: leaves[7], trace_name: 'b7-l59', depth: 60, children: [] });
  });

  it('keeps the depth and execution order a client sends', async () => {
    const root = randomUUID(),
      child = randomUUID();
    await post({ trace_id: root, project_name: 'explicit' });
    await post({
      trace_id: child,
      root_trace_id: root,
      parent_trace_id: root,
      project_name: 'explicit',
      depth: 1,
      execution_order: 7,
    });
    expect((await get(child)).json()).toMatchObject({ depth: 1, execution_order: 7 });
  });

  it('samples whole traces deterministically by root id', async () => {
    const ids = Array.from({ length: 40 }, () => randomUUID());
    const rate = 0.5;
    for (const root of ids) {
      const child = randomUUID();
      await post({ trace_id: root, project_name: 'sampled', log_sample_rate: rate });
      await post({
        trace_id: child,
        root_trace_id: root,
        parent_trace_id: root,
        project_name: 'sampled',
        log_sample_rate: rate,
      });
      const expected = unitHash(root) < rate;
      expect((await get(root)).statusCode, root).toBe(expected ? 200 : 404);
      const [{ count }] = await sql`select count(*)::int from spans where root_trace_id = ${root}`;
      expect(count).toBe(expected ? 2 : 0);
    }
    const none = randomUUID();
    await post({ trace_id: none, project_name: 'sampled', log_sample_rate: 0 });
    expect((await get(none)).statusCode).toBe(404);
  });
});

describe('chain-framework ingest', () => {
  const run = (project_uuid: string) => {
    const root = randomUUID(),
      llm = randomUUID(),
      tool = randomUUID(),
      inner = randomUUID();
    return {
      ids: { root, llm, tool, inner },
      body: {
        id: root,
        name: 'AgentExecutor',
        run_type: 'chain',
        start_time: 1767225600000,
        end_time: 1767225603000,
        inputs: { input: 'What is 2+2?' },
        outputs: { output: '4' },
        extra: { metadata: { user: 'u1' } },
        tags: ['agent'],
        project_uuid,
        child_runs: [
          {
            id: llm,
            name: 'ChatOpenAI',
            run_type: 'llm',
            parent_run_id: root,
            start_time: '2026-01-01T00:00:00.500Z',
            end_time: '2026-01-01T00:00:01.500Z',
            execution_order: 2,
            inputs: { messages: [] },
            outputs: {
              generations: [[{ text: 'use the calculator' }]],
              llm_output: { token_usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } },
            },
            extra: { invocation_params: { model: 'gpt-4o-mini', _type: 'openai-chat', temperature: 0.2 } },
            child_runs: [],
          },
          {
            id: tool,
            name: 'calculator',
            run_type: 'tool',
            parent_run_id: root,
            start_time: 1767225602000,
            end_time: 1767225602500,
            execution_order: 3,
            inputs: { input: '2+2' },
            outputs: { output: '4' },
            child_runs: [
              {
                id: inner,
                name: 'eval',
                run_type: 'chain',
                start_time: 1767225602100,
                end_time: 1767225602200,
                error: 'boom',
                inputs: {},
                outputs: null,
                child_runs: [],
              },
            ],
          },
        ],
      },
    };
  };

  for (const path of ['/trace_log/chainlib', '/trace_log/langchain']) {
    it(`stores a 3-level run tree posted to ${path} and answers the same tree`, async () => {
      const project = (await call(stack.app, key, 'POST', '/project', { name: 'chains' })).json();
      const { ids, body } = run(project.uuid);
      expect((await call(stack.app, key, 'POST', path, body)).statusCode).toBe(200);
      const tree = (await get(ids.root)).json();
      expect(tree).toMatchObject({
        trace_name: 'AgentExecutor',
        output: '4',
        latency: 3,
        tags: ['agent'],
        metadata: { user: 'u1' },
        start_timestamp: '2026-01-01 00:00:00',
        status: 'success',
      });
      expect(tree.children_ids).toEqual([ids.llm, ids.tool]);
      expect(tree.children[0]).toMatchObject({
        trace_name: 'ChatOpenAI',
        depth: 1,
        output: 'use the calculator',
        input_tokens: 11,
        output_tokens: 7,
        total_tokens: 18,
        configuration: { model: 'gpt-4o-mini', provider: 'openai' },
      });
      expect(tree.children[1].children[0]).toMatchObject({
        trace_id: ids.inner,
        depth: 2,
        status: 'error',
        error: 'boom',
      });
    });
  }

  it('answers 422 naming the bad run id', async () => {
    const project = (await call(stack.app, key, 'POST', '/project', { name: 'chains' })).json();
    const { body } = run(project.uuid);
    (body.child_runs[1].child_runs[0] as { id: string }).id = 'nope';
    const res = await call(stack.app, key, 'POST', '/trace_log/chainlib', body);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'child_runs', 1, 'child_runs', 0, 'id']);
  });
});
