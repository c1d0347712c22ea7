import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// The same ratings as libs/core/src/agreement.test.ts, given through the API: people's scores x (on a 0–10
// criterion), the judge's y (a Levenshtein similarity made to land on each value); people's values a and
// the judge's b (its scores 0, 0.5 and 1 read as the options bad, ok, good).
const x = [0.1, 0.4, 0.4, 0.9, 0.7, 0.2, 1.0, 0.55, 0.3, 0.8];
const y = [0.2, 0.35, 0.5, 0.8, 0.9, 0.1, 0.95, 0.5, 0.45, 0.6];
const a = ['good', 'good', 'bad', 'bad', 'ok', 'good', 'ok', 'bad', 'good', 'ok', 'bad', 'good'];
const b = ['good', 'ok', 'bad', 'good', 'ok', 'good', 'bad', 'bad', 'good', 'ok', 'bad', 'ok'];

const {
  stack,
  orgs: [org],
} = useStack({ orgs: ['agreement'] });
const req = (method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, key = org.key) =>
  call(stack.app, key, method, path, body);

let ann: string, bob: string;
beforeAll(async () => {
  const keyFor = async (label: string) =>
    (await req('POST', '/api-keys', { role: 'member', label })).json().key as string;
  [ann, bob] = [await keyFor('ann'), await keyFor('bob')];
  expect((await req('POST', '/eval-metrics', { name: 'lev', type: 'levenshtein' })).statusCode).toBe(200);
});

/** A span the metric scores `similarity` (output against target), once its score is there. */
async function judged(project: string, output: string, target: string): Promise<string> {
  const trace_id = randomUUID();
  await req('POST', '/trace_log', {
    trace_id,
    project_name: project,
    output,
    target,
    evaluation_metric_names: ['lev'],
  });
  await vi.waitFor(
    async () =>
      expect(
        (await readTrace(stack.app, org.key, trace_id)).json().scores?.map((s: { name: string }) => s.name),
      ).toContain('lev'),
    { timeout: 10_000, interval: 50 },
  );
  return trace_id;
}
const annotate = async (key: string, traceId: string, criterion: string, body: { score?: number; value?: string }) =>
  expect((await req('PUT', `/trace_log/${traceId}/annotations/${criterion}`, body, key)).statusCode).toBe(200);

describe('agreement between people and a judge', () => {
  it("measures a score criterion by Spearman's rho and the mean absolute difference, people against each other too", async () => {
    const criterion = (
      await req('POST', '/annotation-criteria', { name: `helpful-${randomUUID()}`, kind: 'score', min: 0, max: 10 })
    ).json();
    expect((await req('GET', `/annotation-criteria/${criterion.id}/agreement`)).json().judge).toBeNull();
    const patched = await req('PATCH', `/annotation-criteria/${criterion.id}`, { eval_metric_name: 'lev' });
    expect(patched.json()).toMatchObject({ eval_metric_name: 'lev' });
    const target = 'a'.repeat(20);
    for (const [i, similarity] of y.entries()) {
      const changed = Math.round((1 - similarity) * 20);
      const id = await judged('agree', 'a'.repeat(20 - changed) + 'b'.repeat(changed), target);
      await annotate(ann, id, criterion.id, { score: x[i] * 10 });
      if (i < 4) await annotate(bob, id, criterion.id, { score: x[i] * 10 });
    }
    const tasks = stack.app.pool.completedTasks();
    const res = await vi.waitFor(
      async () => {
        const r = (await req('GET', `/annotation-criteria/${criterion.id}/agreement`)).json();
        expect([r.judge.n, r.people.n]).toEqual([10, 4]);
        return r;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(stack.app.pool.completedTasks()).toBeGreaterThan(tasks);
    // scipy.stats.spearmanr(x, y).statistic; numpy.mean(numpy.abs(x - y))
    expect(res.judge.spearman).toBeCloseTo(0.9237804878048782, 9);
    expect(res.judge.mean_abs_diff).toBeCloseTo(0.11000000000000001, 9);
    expect(res.judge.spearman_ci[0]).toBeLessThan(res.judge.spearman);
    expect(res.judge.spearman_ci[1]).toBeGreaterThanOrEqual(res.judge.spearman);
    expect(res.people).toMatchObject({ n: 4, spearman: expect.closeTo(1, 9), mean_abs_diff: 0 });
    // The two spans 0.2 apart come first (in either order: their distances differ in the last bits).
    const furthest = res.disagreements.slice(0, 2).map((d: { people: number; judge: number }) => [d.people, d.judge]);
    expect(furthest.map(([p]: number[]) => p).sort()).toEqual([expect.closeTo(0.7, 9), expect.closeTo(0.8, 9)]);
  });

  it("measures a value criterion by Cohen's kappa and its confusion matrix", async () => {
    const criterion = (
      await req('POST', '/annotation-criteria', {
        name: `verdict-${randomUUID()}`,
        kind: 'value',
        options: ['bad', 'ok', 'good'],
        eval_metric_name: 'lev',
      })
    ).json();
    const judgeOf = { bad: ['ab', 'cd'], ok: ['ab', 'ax'], good: ['ab', 'ab'] } as const;
    for (const [i, value] of a.entries()) {
      const [output, target] = judgeOf[b[i] as keyof typeof judgeOf];
      const id = await judged('agree-values', output, target);
      await annotate(ann, id, criterion.id, { value });
      if (i < 5) await annotate(bob, id, criterion.id, { value });
    }
    // Annotations are span events, written by the worker: the figures count them once they are stored.
    const res = await vi.waitFor(
      async () => {
        const r = (await req('GET', `/annotation-criteria/${criterion.id}/agreement`)).json();
        expect([r.judge.n, r.people.n]).toEqual([12, 5]);
        return r;
      },
      { timeout: 10_000, interval: 100 },
    );
    // sklearn.metrics.cohen_kappa_score(a, b); confusion_matrix(a, b, labels=['bad', 'ok', 'good'])
    expect(res.judge).toMatchObject({
      n: 12,
      kappa: expect.closeTo(0.5, 9),
      labels: ['bad', 'ok', 'good'],
      confusion: [
        [3, 0, 1],
        [1, 2, 0],
        [0, 2, 3],
      ],
    });
    expect(res.judge.kappa_ci[0]).toBeLessThan(0.5);
    expect(res.people).toMatchObject({ n: 5, kappa: expect.closeTo(1, 9) });
    expect(res.disagreements).toHaveLength(a.filter((v, i) => v !== b[i]).length);
    // Each disagreement says where the console opens it: a root span of the project it was written to.
    const projectUuid = async (name: string) => (await req('POST', '/project', { name })).json().uuid as string;
    const here = await projectUuid('agree-values');
    expect(res.disagreements[0]).toMatchObject({ root_trace_id: res.disagreements[0].trace_id, project_uuid: here });
    // One project's spans (an annotation queue's), another's, and a project the organization does not have.
    const ofProject = async (uuid: string) =>
      req('GET', `/annotation-criteria/${criterion.id}/agreement?project_uuid=${uuid}`);
    expect((await ofProject(here)).json().judge).toMatchObject({ n: 12, kappa: expect.closeTo(0.5, 9) });
    expect((await ofProject(await projectUuid('agree'))).json()).toMatchObject({ judge: { n: 0 }, people: { n: 0 } });
    expect((await ofProject(randomUUID())).statusCode).toBe(404);
    const outside = (
      await req('GET', `/annotation-criteria/${criterion.id}/agreement?from=2020-01-01&to=2020-02-01`)
    ).json();
    expect(outside.judge.n).toBe(0);
  });
});
