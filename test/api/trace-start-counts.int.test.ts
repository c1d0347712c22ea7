import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// A root stored without start_timestamp reads back as starting when it was first stored, and the traces
// table lists it at that time: the dashboard, the project figures and the session groups must count it
// there too, not leave it out for having no start.
const {
  stack,
  orgs: [{ key }],
} = useStack({ orgs: ['trace-start'] });
let project: string;
const started = [randomUUID(), randomUUID()];
const unstarted = [randomUUID(), randomUUID(), randomUUID()];

beforeAll(async () => {
  const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
  for (const [i, trace_id] of started.entries()) {
    const res = await call(stack.app, key, 'POST', '/trace_log', {
      trace_id,
      project_name: 'no-start',
      start_timestamp: ago(30 + i),
      session_id: 's-1',
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  for (const trace_id of unstarted) {
    const res = await call(stack.app, key, 'POST', '/trace_log', {
      trace_id,
      project_name: 'no-start',
      session_id: 's-1',
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  for (const id of [...started, ...unstarted]) expect((await readTrace(stack.app, key, id)).statusCode).toBe(200);
  project = (await call(stack.app, key, 'POST', '/project', { name: 'no-start' })).json().uuid;
});

describe('traces stored without a start', () => {
  it('are counted by the dashboard, the projects and the session groups as the traces table lists them', async () => {
    const listed = async (body: object) => {
      const res = await call(stack.app, key, 'POST', '/traces', { project_uuid: project, page_size: 100, ...body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { total: number; results: { trace_id: string; start_timestamp: string | null }[] };
    };
    const all = await listed({});
    expect(all.total).toBe(5);
    expect(all.results.every((r) => r.start_timestamp !== null)).toBe(true);
    expect((await listed({ time_range: '24h' })).total).toBe(5);

    for (const time_range of ['24h', '1y']) {
      const res = await call(stack.app, key, 'POST', '/dashboard', { project_uuid: project, time_range });
      expect(res.statusCode, res.body).toBe(200);
      const d = res.json();
      expect(d.totals.traces, time_range).toBe(5);
      expect(d.buckets.reduce((n: number, b: { traces: number }) => n + b.traces, 0)).toBe(5);
    }

    const summary = (await call(stack.app, key, 'GET', '/projects'))
      .json()
      .find((p: { uuid: string }) => p.uuid === project);
    expect(summary).toMatchObject({ traces: 5, traces_24h: 5 });
    // The newest trace the table lists is the project's last activity.
    const newest = all.results
      .map((r) => r.start_timestamp!)
      .sort()
      .at(-1)!;
    expect(Date.parse(summary.last_activity)).toBe(Date.parse(newest));

    const groups = (
      await call(stack.app, key, 'POST', '/trace-groups', { project_uuid: project, by: 'session', time_range: '24h' })
    ).json();
    expect(groups.results).toMatchObject([{ key: 's-1', traces: 5 }]);
    const session = (
      await call(stack.app, key, 'POST', '/trace-group', { project_uuid: project, by: 'session', key: 's-1' })
    ).json();
    expect(session.traces.every((t: { start_timestamp: string | null }) => t.start_timestamp !== null)).toBe(true);
  });
});
