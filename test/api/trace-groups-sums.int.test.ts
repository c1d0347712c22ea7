import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { foldTraceGroups } from '@sightline/db';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// The sessions and users pages over all time are read from each group's sums (trace_groups, and the roots'
// changes not folded yet); over a time range, from the roots. These tests count the traces they sent themselves,
// group by group, and hold both ways of reading to that count, folded or not.

const {
  stack,
  sql,
  orgs: [org],
} = useStack({ orgs: ['group-sums'] });
const { key } = org;

/** The one clock of these traces, to the second (the pages show starts to the second). */
const NOW = Math.floor(Date.now() / 1000) * 1000;
const TRACES = 40;

type Sent = {
  root: string;
  start: number;
  session: string | null;
  user: string | null;
  latency: number | null;
  status: string;
  feedback: number | null;
  costs: number[];
  experiment: boolean;
};

// Seven sessions and four users over four days; some traces in no session or of no user, a few of an experiment
// run (left out of the pages); latencies, some unknown; a fifth failed; feedback on a quarter; one or two calls.
const sent: Sent[] = Array.from({ length: TRACES }, (_, i) => ({
  root: randomUUID(),
  start: NOW - (7 + i * 137) * 60_000,
  session: i % 9 === 8 ? null : `chat-${i % 7}`,
  user: i % 11 === 10 ? null : `user-${i % 4}`,
  latency: i % 6 === 1 ? null : 0.1 * (i + 1),
  status: i % 5 === 2 ? 'error' : 'success',
  feedback: i % 4 === 1 ? i % 2 : null,
  costs: [0.001 * (i + 1), ...(i % 3 === 0 ? [0.0005 * i] : [])],
  experiment: i % 13 === 6,
}));

let project: string;
let experiment: string;
/** The traces as the last test left them. */
let current = sent;

const spansOf = (t: Sent, costs = t.costs) => [
  {
    trace_id: t.root,
    project_uuid: project,
    trace_name: 'turn',
    start_timestamp: new Date(t.start).toISOString(),
    latency: t.latency,
    status: t.status,
    feedback_score: t.feedback,
    session_id: t.session,
    end_user_identifier: t.user,
    ...(t.experiment && { experiment_uuid: experiment }),
  },
  ...costs.map((cost) => ({
    trace_id: randomUUID(),
    root_trace_id: t.root,
    parent_trace_id: t.root,
    project_uuid: project,
    trace_name: 'llm',
    cost,
  })),
];

async function send(spans: object[]) {
  const res = await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans });
  expect(res.statusCode, res.body).toBe(200);
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The groups of `traces` by session or user, as the page lists them: most recently active first. */
function expected(traces: Sent[], by: 'session' | 'user') {
  const groups = new Map<string, Sent[]>();
  for (const t of traces.filter((t) => !t.experiment)) {
    const k = by === 'session' ? t.session : t.user;
    if (k !== null) groups.set(k, [...(groups.get(k) ?? []), t]);
  }
  return [...groups]
    .map(([k, ts]) => ({
      key: k,
      traces: ts.length,
      first_start: utc(Math.min(...ts.map((t) => t.start))),
      last_start: utc(Math.max(...ts.map((t) => t.start))),
      errors: ts.filter((t) => t.status === 'error').length,
      latency_avg: mean(ts.flatMap((t) => (t.latency === null ? [] : [t.latency]))),
      cost: ts.flatMap((t) => t.costs).reduce((a, b) => a + b, 0),
      feedback_mean: mean(ts.flatMap((t) => (t.feedback === null ? [] : [t.feedback]))),
    }))
    .sort((a, b) => b.last_start.localeCompare(a.last_start) || (a.key < b.key ? -1 : 1));
}

const page = async (body: object) => {
  const res = await call(stack.app, key, 'POST', '/trace-groups', { project_uuid: project, page_size: 100, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { total: number; results: Record<string, unknown>[] };
};

/** Both pages (all time, from the sums; the last month, from the roots) list exactly the groups of `traces`. */
async function expectGroups(traces: Sent[]) {
  for (const by of ['session', 'user'] as const) {
    const want = expected(traces, by);
    for (const range of ['na', '1m']) {
      const got = await page({ by, time_range: range });
      expect(got.total).toBe(want.length);
      expect(got.results.map((g) => g.key)).toEqual(want.map((g) => g.key));
      got.results.forEach((g, i) => {
        const { cost, latency_avg, feedback_mean, ...exact } = want[i];
        expect(g).toMatchObject(exact);
        expect(g.cost).toBeCloseTo(cost, 12);
        for (const [field, value] of Object.entries({ latency_avg, feedback_mean }))
          if (value === null) expect(g[field]).toBeNull();
          else expect(g[field]).toBeCloseTo(value, 9);
      });
    }
  }
}

beforeAll(async () => {
  project = (await call(stack.app, key, 'POST', '/project', { name: 'group-sums' })).json().uuid;
  experiment = (
    await call(stack.app, key, 'POST', '/experiment', { name: 'qa', project_uuid: project, run_name: 'one' })
  ).json().uuid;
});

/**
 * Runs `work` while no fold can write trace_groups (any test's worker folds every organization's changes): the
 * roots' changes it makes stay pending, so that the pages are read from them. Readers are not blocked.
 */
async function holdingFolds(work: () => Promise<void>) {
  await sql.begin(async (tx) => {
    await tx`lock table trace_groups in exclusive mode`;
    await work();
    const [{ pending }] = await sql`
      select count(*)::int as pending from trace_group_changes where organization_id = ${org.id}`;
    expect(pending).toBeGreaterThan(0);
  });
}

/** The trace log answers before the roots' totals are stored in some orders: waits for them. */
const totalsStored = (traces: Sent[]) =>
  expect
    .poll(async () => (await page({ by: 'user' })).results.reduce((n, g) => n + (g.cost as number), 0), {
      timeout: 10_000,
    })
    .toBeCloseTo(
      expected(traces, 'user').reduce((n, g) => n + g.cost, 0),
      12,
    );

describe('the sessions and users pages over all time', () => {
  it('count what the roots count, group by group, before and after the changes are folded', async () => {
    await holdingFolds(async () => {
      await send(sent.flatMap((t) => spansOf(t)));
      for (const t of sent) expect((await readTrace(stack.app, key, t.root)).statusCode).toBe(200);
      await totalsStored(sent);
      await expectGroups(sent);
    });
    // In chunks of 5 changes, each in its own transaction, until none is left.
    await foldTraceGroups(sql, { chunk: 5 });
    const [{ left }] = await sql`
      select count(*)::int as left from trace_group_changes where organization_id = ${org.id}`;
    expect(left).toBe(0);
    await expectGroups(sent);
  });

  it('page through the groups in order, with their number', async () => {
    const all = expected(sent, 'session');
    const second = await page({ by: 'session', page: 2, page_size: 3 });
    expect(second.total).toBe(all.length);
    expect(second.results.map((g) => g.key)).toEqual(all.slice(3, 6).map((g) => g.key));
    expect((await page({ by: 'session', search: 'CHAT-3' })).results.map((g) => g.key)).toEqual(['chat-3']);
  });

  it('follow late spans and changed roots, folded or not', async () => {
    await foldTraceGroups(sql);
    // A late call under five traces; five roots sent again with another latency, status and feedback, one of
    // them moved to another session and user and to the newest start.
    const changed = sent.map((t, i) => {
      if (i % 8 === 1) return { ...t, costs: [...t.costs, 0.25] };
      if (i % 8 === 2)
        return {
          ...t,
          latency: 42 + i,
          status: 'error',
          feedback: 1,
          ...(i === 2 && { session: 'chat-moved', user: 'user-9', start: NOW - 60_000 }),
        };
      return t;
    });
    await holdingFolds(async () => {
      await send(
        changed.flatMap((t, i) => {
          if (i % 8 === 1) return spansOf(t, t.costs.slice(-1)).slice(1);
          return i % 8 === 2 ? spansOf(t, []) : [];
        }),
      );
      for (const t of changed) expect((await readTrace(stack.app, key, t.root)).statusCode).toBe(200);
      await totalsStored(changed);
      await expectGroups(changed);
    });
    await foldTraceGroups(sql, { chunk: 5 });
    await expectGroups(changed);
    current = changed;
  });

  it('forget the traces that retention removes, and the groups left empty, folded or not', async () => {
    // Every trace of session chat-4, and a few others.
    const removed = current.filter((t, i) => t.session === 'chat-4' || i % 10 === 3);
    const left = current.filter((t) => !removed.includes(t));
    await holdingFolds(async () => {
      await sql`delete from spans where organization_id = ${org.id} and root_trace_id = any(${removed.map((t) => t.root)}::uuid[])`;
      await expectGroups(left);
    });
    await foldTraceGroups(sql);
    await expectGroups(left);
    const [{ empty }] = await sql`
      select count(*)::int as empty from trace_groups where organization_id = ${org.id} and (traces = 0 or key = 'chat-4')`;
    expect(empty).toBe(0);
  });
});
