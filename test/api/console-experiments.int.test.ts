import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }, other],
} = useStack({ orgs: ['console-experiments', 'console-experiments-other'] });
let projectUuid: string;
let experiment: { uuid: string };
let unfinished: { uuid: string };
const LONG = 'x'.repeat(2500);

/** A sample of a run: a root trace with inputs, target, an output, and its accuracy. */
const sample = (experimentUuid: string, i: number, accuracy: number | null) => ({
  trace_id: randomUUID(),
  project_uuid: projectUuid,
  experiment_uuid: experimentUuid,
  trace_name: 'case',
  start_timestamp: new Date(Date.now() - 60_000 + i * 1000).toISOString(),
  inputs: { question: `q${i}` },
  target: `a${i}`,
  output: i === 0 ? LONG : `a${i}`,
  latency: 1 + i,
  scores: accuracy === null ? [] : [{ name: 'accuracy', score: accuracy }],
});

beforeAll(async () => {
  projectUuid = (await call(stack.app, key, 'POST', '/project', { name: 'evals' })).json().uuid;
  const create = async (run_name: string) =>
    (await call(stack.app, key, 'POST', '/experiment', { name: 'qa', project_uuid: projectUuid, run_name })).json();
  experiment = await create('first');
  unfinished = await create('second');
  const spans = [...[0.2, 0.4, 0.9, null].map((a, i) => sample(experiment.uuid, i, a)), sample(unfinished.uuid, 0, 1)];
  expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
  for (const s of spans) expect((await readTrace(stack.app, key, s.trace_id)).statusCode).toBe(200);
});

describe('the console’s experiment reads', () => {
  it('POST /experiments/summaries: the project’s experiments with the samples each holds now', async () => {
    const res = await call(stack.app, key, 'POST', '/experiments/summaries', { project_uuid: projectUuid });
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().results as { uuid: string; run_name: string; samples: number; num_samples: number }[];
    expect(rows.map((r) => [r.run_name, r.samples]).sort()).toEqual([
      ['first', 4],
      ['second', 1],
    ]);
    const elsewhere = await call(stack.app, other.key, 'POST', '/experiments/summaries', { project_uuid: projectUuid });
    expect(elsewhere.json().results).toEqual([]);
  });

  it('POST /experiment/{uuid}/samples: rows in run order with payloads, scores summarized, filtered by score', async () => {
    const res = await call(stack.app, key, 'POST', `/experiment/${experiment.uuid}/samples`, { page_size: 3 });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ total: 4, total_pages: 2, page: 1 });
    expect(page.results.map((r: { inputs: unknown }) => r.inputs)).toEqual([
      { question: 'q0' },
      { question: 'q1' },
      { question: 'q2' },
    ]);
    expect(page.results[0]).toMatchObject({ target: 'a0', output: LONG.slice(0, 2000), output_truncated: true });
    expect(page.results[1]).toMatchObject({ output: 'a1', output_truncated: false });
    const [accuracy] = page.summary;
    expect(accuracy).toMatchObject({ name: 'accuracy', count: 3, min: 0.2, max: 0.9, median: 0.4 });
    expect(accuracy.mean).toBeCloseTo(0.5, 10);
    // The sample standard deviation of 0.2, 0.4 and 0.9.
    expect(accuracy.standard_deviation).toBeCloseTo(Math.sqrt((0.3 ** 2 + 0.1 ** 2 + 0.4 ** 2) / 2), 10);

    const filtered = await call(stack.app, key, 'POST', `/experiment/${experiment.uuid}/samples`, {
      filter_field: 'score:accuracy',
      filter_operator: 'greater_than',
      filter_value: '0.3',
    });
    expect(filtered.json().results.map((r: { target: string }) => r.target)).toEqual(['a1', 'a2']);
  });

  it('answers 404 for another organization’s experiment, 422 for a bad filter', async () => {
    const res = await call(stack.app, other.key, 'POST', `/experiment/${experiment.uuid}/samples`, {});
    expect(res.statusCode).toBe(404);
    const bad = await call(stack.app, key, 'POST', `/experiment/${experiment.uuid}/samples`, {
      filter_field: 'latency',
      filter_operator: 'sounds_like',
      filter_value: '1',
    });
    expect(bad.statusCode).toBe(422);
  });
});
