import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildStack, call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  sql,
  orgs: [org, other],
} = useStack({ orgs: ['batch', 'batch-other'] });

const batch = (trace_logs: unknown, key = org.key) => call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs });

/** A root and its children, as a client sends them. */
function trace(project_name: string, children: number) {
  const root = randomUUID();
  const spans = [
    {
      trace_id: root,
      root_trace_id: root,
      project_name,
      trace_name: 'root',
      depth: 0,
      execution_order: 0,
      metadata: { n: 0 },
      tags: ['batch'],
    },
  ];
  for (let i = 1; i <= children; i++) {
    spans.push({
      trace_id: randomUUID(),
      root_trace_id: root,
      parent_trace_id: root,
      project_name,
      trace_name: `child-${i}`,
      depth: 1,
      execution_order: i,
      metadata: { n: i },
      tags: [],
    } as never);
  }
  return spans;
}

describe('POST /trace_logs/batch', () => {
  it('accepts 1000 spans in one request, answering each in order, and stores them all as trees', async () => {
    const project = `batch-${randomUUID()}`;
    const spans = Array.from({ length: 200 }, () => trace(project, 4)).flat();
    const res = await batch(spans);
    expect(res.statusCode).toBe(200);
    const { results } = res.json();
    expect(results).toHaveLength(1000);
    expect(results.map((r: { index: number }) => r.index)).toEqual(spans.map((_, i) => i));
    expect(results.every((r: { status: number; sampled: boolean }) => r.status === 200 && r.sampled)).toBe(true);
    expect(results.map((r: { trace_id: string }) => r.trace_id)).toEqual(spans.map((s) => s.trace_id));

    const tree = (await readTrace(stack.app, org.key, spans[0].trace_id)).json();
    expect(tree.children.map((c: { trace_name: string }) => c.trace_name)).toEqual([
      'child-1',
      'child-2',
      'child-3',
      'child-4',
    ]);
    for (let i = 0; i < 50; i++) {
      const [{ n }] =
        await sql`select count(*)::int as n from spans s join projects p on p.id = s.project_id where p.name = ${project} and s.created`;
      if (n === 1000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const listing = (
      await call(stack.app, org.key, 'POST', '/get_trace_logs', { project_name: project, page_size: 1 })
    ).json();
    expect(listing.total).toBe(200);
  });

  it('answers 207 with per-item errors, and still accepts the valid items', async () => {
    const project = `batch-mixed-${randomUUID()}`;
    const good = randomUUID(),
      alsoGood = randomUUID();
    const res = await batch([
      { trace_id: good, project_name: project, trace_name: 'ok' },
      { trace_id: 'not-a-uuid', project_name: project },
      { trace_id: randomUUID(), project_uuid: randomUUID() },
      'a string where a trace log belongs',
      { trace_id: randomUUID() },
      { trace_id: alsoGood, project_name: project, trace_name: 'ok too' },
    ]);
    expect(res.statusCode).toBe(207);
    const { results } = res.json();
    expect(results.map((r: { status: number }) => r.status)).toEqual([200, 422, 404, 422, 422, 200]);
    expect(results[1].detail).toEqual([expect.objectContaining({ loc: ['body', 'trace_logs', 1, 'trace_id'] })]);
    expect(results[2].detail).toBe('project not found');
    expect(results[3].detail[0].loc).toEqual(['body', 'trace_logs', 3]);
    expect(results[4].detail[0].loc).toEqual(['body', 'trace_logs', 4, 'project_name']);
    expect((await readTrace(stack.app, org.key, good)).json().trace_name).toBe('ok');
    expect((await readTrace(stack.app, org.key, alsoGood)).json().trace_name).toBe('ok too');
  });

  it('applies items about the same span in array order: the later one wins', async () => {
    const trace_id = randomUUID();
    const res = await batch([
      { trace_id, project_name: 'batch-order', output: 'first', status: 'success' },
      { trace_id, project_name: 'batch-order', output: 'second', status: 'error' },
    ]);
    expect(res.statusCode).toBe(200);
    expect((await readTrace(stack.app, org.key, trace_id)).json()).toMatchObject({ output: 'second', status: 'error' });
  });

  it('drops sampled-out traces and says so per item', async () => {
    const trace_id = randomUUID();
    const res = await batch([{ trace_id, project_name: 'batch-sampling', log_sample_rate: 0 }]);
    expect(res.json().results).toEqual([{ index: 0, status: 200, trace_id, sampled: false }]);
    expect((await readTrace(stack.app, org.key, trace_id)).statusCode).toBe(404);
  });

  it('refuses a malformed envelope with 422 and accepts nothing', async () => {
    const trace_id = randomUUID();
    const tooMany = Array.from({ length: 1001 }, () => ({ trace_id, project_name: 'batch-limit' }));
    for (const body of [
      { trace_logs: tooMany },
      { trace_logs: [] },
      { trace_logs: { trace_id } },
      [{ trace_id, project_name: 'x' }],
    ]) {
      const res = await call(stack.app, org.key, 'POST', '/trace_logs/batch', body);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail[0].loc[0]).toBe('body');
    }
    expect((await readTrace(stack.app, org.key, trace_id)).statusCode).toBe(404);
  });

  it("never lets an organization write into another's project", async () => {
    const project_uuid = (await call(stack.app, org.key, 'POST', '/project', { name: 'batch-private' })).json().uuid;
    const trace_id = randomUUID();
    const res = await batch([{ trace_id, project_uuid }], other.key);
    expect(res.statusCode).toBe(207);
    expect(res.json().results[0]).toMatchObject({ status: 404 });
    expect(await sql`select 1 from spans where trace_id = ${trace_id}`).toHaveLength(0);
  });
});

describe('durable acceptance', () => {
  it('answers 200 only once Redis holds the spans, and coalesces concurrent requests into few jobs', async () => {
    const paused = await buildStack({ worker: false });
    try {
      const project = `batch-durable-${randomUUID()}`;
      const singles = Array.from({ length: 40 }, () => ({ trace_id: randomUUID(), project_name: project }));
      const answers = await Promise.all([
        ...singles.map((s) => call(paused.app, org.key, 'POST', '/trace_log', s)),
        call(paused.app, org.key, 'POST', '/trace_logs/batch', { trace_logs: trace(project, 9) }),
      ]);
      expect(answers.every((a) => a.statusCode === 200)).toBe(true);
      const jobs = await paused.app.spanWrites[0]!.queue.getJobs(['waiting']);
      const queued = jobs.flatMap((j) => j.data.events.map((e: { trace_id: string }) => e.trace_id));
      expect(queued).toHaveLength(50);
      expect(new Set(queued)).toEqual(
        new Set([
          ...singles.map((s) => s.trace_id),
          ...answers
            .at(-1)!
            .json()
            .results.map((r: { trace_id: string }) => r.trace_id),
        ]),
      );
      expect(jobs.length).toBeLessThan(41);
    } finally {
      await paused.close();
    }
  });
});
