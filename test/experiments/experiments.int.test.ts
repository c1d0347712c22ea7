import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { finishExperiment } from '@sightline/db';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [{ key }, { key: otherKey }],
} = useStack({ orgs: ['org', 'org'] });
let project: { uuid: string; name: string };

beforeAll(async () => {
  project = (await call(stack.app, key, 'POST', '/project', { name: `exp-${randomUUID()}` })).json();
});

const post = (path: string, body?: unknown, k = key) => call(stack.app, k, 'POST', path, body);
const newExperiment = async (extra: object = {}) =>
  (await post('/experiment', { name: 'eval', project_uuid: project.uuid, ...extra })).json();
const list = async (filters: object = {}) => (await post('/experiments', filters)).json();
const statusOf = async (uuid: string) => (await list({ experiment_uuids: [uuid] }))[0].status;

/** A root with two children and a grandchild; the LLM usage sits below the root. */
async function writeTrace(experiment_uuid: string, scores: object[] = [], latency = 2) {
  const root = randomUUID();
  await post('/trace_log', {
    trace_id: root,
    project_uuid: project.uuid,
    experiment_uuid,
    trace_name: 'case',
    latency,
    input_tokens: 1,
    output_tokens: 1,
    cost: 0.5,
    scores,
  });
  let parent = root;
  for (const i of [1, 2]) {
    const child = randomUUID();
    await post('/trace_log', {
      trace_id: child,
      root_trace_id: root,
      parent_trace_id: parent,
      project_uuid: project.uuid,
      trace_name: `llm-${i}`,
      input_tokens: 10 * i,
      output_tokens: i,
      cost: 0.25 * i,
      latency: 99,
    });
    parent = child; // the second LLM call is a grandchild of the root
  }
  return root;
}

describe('POST /experiment', () => {
  it('creates a pending experiment and echoes its fields', async () => {
    const res = await post('/experiment', {
      name: 'baseline',
      project_uuid: project.uuid,
      run_name: 'run_1-a',
      is_public: true,
      metadata: { model: 'gpt-4o' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      uuid: expect.any(String),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      name: 'baseline',
      project_uuid: project.uuid,
      run_name: 'run_1-a',
      is_public: true,
      metadata: { model: 'gpt-4o' },
      status: 'pending',
    });
  });
  it('answers 409 for a run_name used in the project, 422 for a malformed one, 404 for an unknown project', async () => {
    await post('/experiment', { name: 'a', project_uuid: project.uuid, run_name: 'taken' });
    const dup = await post('/experiment', { name: 'b', project_uuid: project.uuid, run_name: 'taken' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ detail: expect.stringContaining('taken') });
    const bad = await post('/experiment', { name: 'c', project_uuid: project.uuid, run_name: 'has space!' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'run_name']);
    expect((await post('/experiment', { name: 'd', project_uuid: randomUUID() })).statusCode).toBe(404);
    expect((await post('/experiment', { name: 'e', project_uuid: project.uuid }, otherKey)).statusCode).toBe(404);
  });
  it('generates readable, unique run names', async () => {
    const names = await Promise.all(Array.from({ length: 10 }, async () => (await newExperiment()).run_name));
    for (const n of names) expect(n).toMatch(/^[a-z]+-[a-z]+-[0-9a-f]{4}$/);
    expect(new Set(names).size).toBe(10);
  });
});

describe('experiment lifecycle and stats', () => {
  it('runs once a trace log is written, and a finish right after 200 writes counts all 200', async () => {
    const exp = await newExperiment();
    expect(await statusOf(exp.uuid)).toBe('pending');
    const roots = Array.from({ length: 200 }, () => randomUUID());
    await Promise.all(
      roots.map((trace_id, i) =>
        post('/trace_log', {
          trace_id,
          project_uuid: project.uuid,
          experiment_uuid: exp.uuid,
          scores: [{ name: 'acc', score: i % 2 }],
        }),
      ),
    );
    const pooled = stack.workerPoolTasks();
    const res = await post(`/experiment/${exp.uuid}/finished`);
    expect(res.statusCode).toBe(200);
    expect(stack.workerPoolTasks()).toBeGreaterThan(pooled); // the scores were summarized on the pool
    const stats = res.json().parent_trace_stats;
    expect(stats).toHaveLength(200);
    expect(new Set(stats.map((s: { trace_id: string }) => s.trace_id))).toEqual(new Set(roots));
    const [listed] = await list({ experiment_uuids: [exp.uuid] });
    expect(listed).toMatchObject({
      status: 'completed',
      num_samples: 200,
      pinned_stats: [{ var1: 'acc', operation: 'mean', value: 0.5 }],
    });
  });

  it('goes from pending to running when its first trace log is written', async () => {
    const exp = await newExperiment();
    await writeTrace(exp.uuid);
    await call(stack.app, key, 'GET', `/experiment/${exp.uuid}/stats`); // waits for the accepted writes
    expect(await statusOf(exp.uuid)).toBe('running');
  });

  it("sums tokens and cost over each root's subtree, with the root's latency and scores", async () => {
    const exp = await newExperiment();
    const root = await writeTrace(exp.uuid, [{ name: 'acc', score: 1, reason: 'right' }], 3.5);
    const res = await call(stack.app, key, 'GET', `/experiment/${exp.uuid}/stats`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      parent_trace_stats: [
        {
          trace_id: root,
          latency: 3.5,
          input_tokens: 31,
          output_tokens: 4,
          total_tokens: 35,
          cost: 1.25,
          scores: [{ name: 'acc', score: 1, reason: 'right' }],
        },
      ],
    });
  });

  it('stores pinned stats from dataset_level_stats and the mean of every score, merges metadata, and finishes again', async () => {
    const exp = await newExperiment({ metadata: { dataset: 'qa-v1' } });
    await writeTrace(exp.uuid, [
      { name: 'acc', score: 1 },
      { name: 'f1', score: 0.5 },
    ]);
    await writeTrace(exp.uuid, [{ name: 'acc', score: 0 }]);
    const first = await post(`/experiment/${exp.uuid}/finished`, {
      status: 'failed',
      dataset_level_stats: [{ name: 'correlation', score: 0.7 }],
      metadata: { note: 'x' },
    });
    expect(first.json().parent_trace_stats).toHaveLength(2);
    let [listed] = await list({ experiment_uuids: [exp.uuid] });
    expect(listed).toMatchObject({ status: 'failed', num_samples: 2, metadata: { dataset: 'qa-v1', note: 'x' } });
    expect(listed.pinned_stats).toEqual(
      expect.arrayContaining([
        { var1: 'correlation', operation: 'custom', value: 0.7 },
        { var1: 'acc', operation: 'mean', value: 0.5 },
        { var1: 'f1', operation: 'mean', value: 0.5 },
      ]),
    );
    // An update accepted just before the finish is counted by it.
    // A finish that sends no dataset-level stats keeps the ones pinned before.
    const third = await writeTrace(exp.uuid);
    await call(stack.app, key, 'PUT', '/trace_log', {
      trace_id: third,
      field_name_to_value_map: { scores: [{ name: 'acc', score: 1 }] },
    });
    await post(`/experiment/${exp.uuid}/finished`, null);
    [listed] = await list({ experiment_uuids: [exp.uuid] });
    expect(listed).toMatchObject({ status: 'completed', num_samples: 3 });
    expect(listed.pinned_stats).toContainEqual({ var1: 'acc', operation: 'mean', value: 2 / 3 });
    expect(listed.pinned_stats).toContainEqual({ var1: 'correlation', operation: 'custom', value: 0.7 });
  });

  it('refuses a finish that does not end the experiment', async () => {
    const exp = await newExperiment();
    const res = await post(`/experiment/${exp.uuid}/finished`, { status: 'running' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'status']);
  });

  it('keeps the result of the later of two finishes, whichever worker ends last', async () => {
    const exp = await newExperiment();
    const org = (await sql`select organization_id from experiments where uuid = ${exp.uuid}`)[0].organization_id;
    const stored = (seq: number, status: string) =>
      finishExperiment(sql, org, exp.uuid, { seq, status, pinnedStats: [], numSamples: seq, metadata: {} });
    expect(await stored(20, 'failed')).toBe(true);
    expect(await stored(10, 'completed')).toBe(false);
    expect(await statusOf(exp.uuid)).toBe('failed');
    const [a, b] = await Promise.all([
      post(`/experiment/${exp.uuid}/finished`, { status: 'completed' }),
      post(`/experiment/${exp.uuid}/finished`, { status: 'failed' }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const [{ finish_seq, status }] = await sql`select finish_seq, status from experiments where uuid = ${exp.uuid}`;
    expect(Number(finish_seq)).toBeGreaterThan(20);
    expect(['completed', 'failed']).toContain(status);
  });

  it('tells a waiting caller at once when its job cannot be read', async () => {
    const replyTo = randomUUID();
    const started = Date.now();
    const outcome = stack.app
      .awaitReply(
        replyTo,
        () => stack.app.finalizeJobs.queue.add('experiment-finalize', { reply_to: replyTo, bogus: true } as never),
        { timeoutMs: 20_000, timeoutMessage: 'timeout' },
      )
      .catch((err: Error & { statusCode?: number }) => err);
    const err = (await outcome) as Error & { statusCode?: number };
    expect(err.statusCode).toBe(500);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("lists the experiment's root trace logs as trees, with the shared filter", async () => {
    const exp = await newExperiment();
    const a = await writeTrace(exp.uuid, [{ name: 'acc', score: 1 }]);
    await writeTrace(exp.uuid, [{ name: 'acc', score: 0 }]);
    const all = (await post(`/experiment/${exp.uuid}/trace_logs`, {})).json();
    expect(all).toHaveLength(2);
    expect(all[0].children).toHaveLength(1);
    expect(all[0].children[0].children).toHaveLength(1);
    const good = (
      await post(`/experiment/${exp.uuid}/trace_logs`, {
        filter_field: 'score:acc',
        filter_operator: 'equals',
        filter_value: '1',
      })
    ).json();
    expect(good.map((t: { trace_id: string }) => t.trace_id)).toEqual([a]);
    expect(
      (
        await post(`/experiment/${exp.uuid}/trace_logs`, {
          filter_field: 'nope',
          filter_operator: 'equals',
          filter_value: '1',
        })
      ).statusCode,
    ).toBe(422);
  });
});

describe('POST /experiments', () => {
  it('applies every filter', async () => {
    const other = (await call(stack.app, key, 'POST', '/project', { name: `other-${randomUUID()}` })).json();
    const tag = randomUUID().slice(0, 8);
    const a = await newExperiment({ name: `alpha-${tag}`, run_name: `ra-${tag}`, metadata: { team: 'x', v: 1 } });
    const b = await newExperiment({ name: `beta-${tag}`, run_name: `rb-${tag}`, metadata: { team: 'y' } });
    const c = (
      await post('/experiment', { name: `alpha-${tag}`, project_uuid: other.uuid, run_name: `rc-${tag}` })
    ).json();
    const uuids = async (f: object) => (await list(f)).map((e: { uuid: string }) => e.uuid).sort();
    expect(await uuids({ experiment_name_filter: `alpha-${tag}` })).toEqual([a.uuid, c.uuid].sort());
    expect(await uuids({ experiment_name_filter: `alpha-${tag}`, project_name: project.name })).toEqual([a.uuid]);
    expect(await uuids({ run_name_filter: `b-${tag}` })).toEqual([b.uuid]);
    expect(await uuids({ metadata_filter: { team: 'x', v: 1 }, run_name_filter: tag })).toEqual([a.uuid]);
    expect(await uuids({ experiment_uuids: [b.uuid, c.uuid] })).toEqual([b.uuid, c.uuid].sort());
    const [item] = await list({ experiment_uuids: [a.uuid] });
    expect(Object.keys(item).sort()).toEqual([
      'created_at',
      'is_public',
      'metadata',
      'name',
      'num_samples',
      'pinned_stats',
      'project_uuid',
      'run_name',
      'status',
      'uuid',
    ]);
    expect(await list({ experiment_uuids: [a.uuid] })).toHaveLength(1);
    expect((await post('/experiments', { experiment_uuids: [a.uuid] }, otherKey)).json()).toEqual([]);
  });
});

describe('isolation', () => {
  it("answers 404 on every experiment path for an unknown experiment or another organization's", async () => {
    const exp = await newExperiment();
    for (const [k, uuid] of [
      [key, randomUUID()],
      [otherKey, exp.uuid],
    ]) {
      expect((await call(stack.app, k, 'GET', `/experiment/${uuid}/stats`)).statusCode).toBe(404);
      expect((await call(stack.app, k, 'POST', `/experiment/${uuid}/finished`)).statusCode).toBe(404);
      expect((await call(stack.app, k, 'POST', `/experiment/${uuid}/trace_logs`, {})).statusCode).toBe(404);
    }
    expect(await statusOf(exp.uuid)).toBe('pending');
  });
});
