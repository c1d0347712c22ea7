import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { applySpanEvents, getOrCreateProject, rootIds, type RootQuery } from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { useSql, useStatementCount } from '../support/fixtures';
import { newOrganization } from '../support/services';

// A trace's total cost and tokens, as its row in the traces table shows them, are stored on its root by the
// span writer, whatever order its spans come in, and the listing sorts by them.

const { sql } = useSql();
const countStatements = useStatementCount();
let org: string;
let seq = 1;

beforeAll(async () => {
  org = (await newOrganization(sql, 'trace-totals')).id;
});

const ev = (kind: SpanEvent['kind'], trace_id: string, fields: SpanEvent['fields'], project?: string): SpanEvent => ({
  kind,
  organization_id: org,
  trace_id,
  seq: seq++,
  fields: kind === 'create' ? { project_id: project, ...fields } : fields,
});
const child = (id: string, root: string, fields: SpanEvent['fields'] = {}, project?: string) =>
  ev('create', id, { root_trace_id: root, parent_trace_id: root, ...fields }, project);

/** The totals stored on the root, and the ones its row and the dashboard show (traceTotal): they must agree. */
async function totals(root: string) {
  const [row] = await sql<
    {
      cost: number | null;
      tokens: number | null;
      shown_cost: number | null;
      shown_tokens: number | null;
      usage: unknown;
      shown_usage: unknown;
    }[]
  >`
    select s.trace_cost as cost, s.trace_tokens as tokens,
      coalesce(s.cost, (select sum(c.cost) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created)) as shown_cost,
      coalesce(s.total_tokens, (select sum(c.total_tokens) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created))::int8 as shown_tokens,
      jsonb_build_array(s.trace_input_tokens, s.trace_output_tokens, s.trace_models) as usage,
      jsonb_build_array(
        coalesce(s.input_tokens, (select sum(c.input_tokens) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created)),
        coalesce(s.output_tokens, (select sum(c.output_tokens) from spans c where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created)),
        (select jsonb_agg(jsonb_build_object('model', m.model, 'calls', m.calls, 'cost', m.cost) order by m.model) from (
          select c.model, count(*) as calls, sum(c.cost) as cost from spans c
          where c.organization_id = s.organization_id and c.root_trace_id = s.trace_id and c.created and c.model is not null
          group by c.model) m)) as shown_usage
    from spans s where s.organization_id = ${org} and s.trace_id = ${root}`;
  if (row.shown_cost === null) expect(row.cost).toBeNull();
  else expect(row.cost).toBeCloseTo(row.shown_cost);
  expect(row.tokens).toBe(row.shown_tokens);
  expect(row.usage).toEqual(row.shown_usage);
  return { cost: row.cost, tokens: row.tokens, usage: row.usage };
}

describe('a trace’s stored totals', () => {
  it('sum the children stored before their root', async () => {
    const root = randomUUID();
    await applySpanEvents(sql, [child(randomUUID(), root, { cost: 0.25, total_tokens: 100 })]);
    await applySpanEvents(sql, [child(randomUUID(), root, { cost: 0.5, input_tokens: 30, output_tokens: 20 })]);
    await applySpanEvents(sql, [ev('create', root, { trace_name: 'late root' })]);
    const t = await totals(root);
    expect(t.cost).toBeCloseTo(0.75);
    expect(t.tokens).toBe(150);
  });

  it('follow a child’s cost and tokens updated later, and a child added later', async () => {
    const root = randomUUID(),
      a = randomUUID();
    await applySpanEvents(sql, [ev('create', root, {}), child(a, root, { cost: 0.1, total_tokens: 10 })]);
    await applySpanEvents(sql, [ev('update', a, { cost: 0.4, total_tokens: 40 })]);
    expect(await totals(root)).toMatchObject({ tokens: 40 });
    expect((await totals(root)).cost).toBeCloseTo(0.4);
    await applySpanEvents(sql, [child(randomUUID(), root, { cost: 0.2, total_tokens: 5 })]);
    expect(await totals(root)).toMatchObject({ tokens: 45 });
    expect((await totals(root)).cost).toBeCloseTo(0.6);
  });

  it('count a span once when it is sent twice, and not before it is created', async () => {
    const root = randomUUID(),
      a = randomUUID(),
      late = randomUUID();
    const create = child(a, root, { cost: 0.3, total_tokens: 30 });
    await applySpanEvents(sql, [ev('create', root, {}), create]);
    await applySpanEvents(sql, [create]);
    await applySpanEvents(sql, [create, create]);
    // An update alone stores no span of the trace yet.
    await applySpanEvents(sql, [ev('update', late, { root_trace_id: root, cost: 1, total_tokens: 1000 })]);
    expect(await totals(root)).toMatchObject({ tokens: 30 });
    await applySpanEvents(sql, [child(late, root)]);
    expect(await totals(root)).toMatchObject({ tokens: 1030 });
    expect((await totals(root)).cost).toBeCloseTo(1.3);
  });

  it('count calls and cost by model, and input and output tokens, as the dashboard sums them', async () => {
    const root = randomUUID(),
      a = randomUUID();
    const call = (model: string, cost: number) => ({
      configuration: { model },
      cost,
      input_tokens: 10,
      output_tokens: 4,
    });
    await applySpanEvents(sql, [
      child(a, root, call('gpt-4o', 0.5)),
      child(randomUUID(), root, call('gpt-4o', 0.25)),
      child(randomUUID(), root, { total_tokens: 3 }),
    ]);
    await applySpanEvents(sql, [ev('create', root, {}), child(randomUUID(), root, call('claude', 1))]);
    expect((await totals(root)).usage).toEqual([
      30,
      12,
      [
        { model: 'claude', calls: 1, cost: 1 },
        { model: 'gpt-4o', calls: 2, cost: 0.75 },
      ],
    ]);
    await applySpanEvents(sql, [ev('update', a, { configuration: { model: 'claude' } })]);
    expect((await totals(root)).usage).toEqual([
      30,
      12,
      [
        { model: 'claude', calls: 2, cost: 1.5 },
        { model: 'gpt-4o', calls: 1, cost: 0.25 },
      ],
    ]);
  });

  it('are written with the root when its whole trace comes in one batch, which then writes the root once', async () => {
    // Each write of a root is a change of its hour for the dashboard: a root inserted and then updated with its
    // totals makes three (its insert, and the update's removal and addition), a root inserted with them one.
    const project = (await getOrCreateProject(sql, org, `one-batch-${randomUUID()}`)).uuid;
    const changes = async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from trace_hour_changes where project_id = ${project}`)[0]
        .n;
    const call = (model: string, cost: number) => ({
      configuration: { model },
      cost,
      input_tokens: 7,
      output_tokens: 2,
    });
    const single = randomUUID();
    await applySpanEvents(sql, [ev('create', single, { ...call('gpt-4o-mini', 0.001), total_tokens: 9 }, project)]);
    expect(await totals(single)).toMatchObject({
      cost: 0.001,
      tokens: 9,
      usage: [7, 2, [{ model: 'gpt-4o-mini', calls: 1, cost: 0.001 }]],
    });
    expect(await changes()).toBe(1);

    const root = randomUUID();
    await applySpanEvents(sql, [
      ev('create', root, { trace_name: 'agent' }, project),
      child(randomUUID(), root, call('gpt-4o', 0.5)),
      child(randomUUID(), root, call('gpt-4o', 0.25)),
      child(randomUUID(), root, { ...call('claude', 1), usage_estimated: true }),
    ]);
    expect(await totals(root)).toMatchObject({ cost: 1.75, tokens: 27 });
    expect((await totals(root)).usage).toEqual([
      21,
      6,
      [
        { model: 'claude', calls: 1, cost: 1 },
        { model: 'gpt-4o', calls: 2, cost: 0.75 },
      ],
    ]);
    const [{ estimated }] =
      await sql`select trace_usage_estimated as estimated from spans where organization_id = ${org} and trace_id = ${root}`;
    expect(estimated).toBe(true);
    expect(await changes()).toBe(2);
  });

  it('are not counted again by the database for a trace new to the store whose root is written with them', async () => {
    // The recount (storeTraceTotals) was most of PostgreSQL's time in writing a completion's log (issue 39). The
    // statements this client sends are the writer's real SQL.
    const recounts = (events: SpanEvent[]) =>
      countStatements(/with totals as/, (watched) => applySpanEvents(watched, events));
    // A completion's log: a new trace, its root alone.
    const single = randomUUID();
    expect(await recounts([ev('create', single, { configuration: { model: 'gpt-4o' }, cost: 0.5 })])).toBe(0);
    expect(await totals(single)).toMatchObject({ cost: 0.5, usage: [null, null, [{ model: 'gpt-4o', calls: 1 }]] });
    // A whole trace with one cost in it.
    const whole = randomUUID();
    expect(await recounts([ev('create', whole, {}), child(randomUUID(), whole, { cost: 0.25, total_tokens: 4 })])).toBe(
      0,
    );
    expect(await totals(whole)).toMatchObject({ cost: 0.25, tokens: 4 });

    // Its root's totals change later: counted again.
    expect(await recounts([child(randomUUID(), whole, { total_tokens: 6 })])).toBe(1);
    expect(await totals(whole)).toMatchObject({ cost: 0.25, tokens: 10 });
    // A root after its children: counted, as the trace is not new.
    const late = randomUUID();
    await applySpanEvents(sql, [child(randomUUID(), late, { total_tokens: 3 })]);
    expect(await recounts([ev('create', late, {})])).toBe(1);
    expect(await totals(late)).toMatchObject({ tokens: 3 });
    // Two costs added: the database's sum, whose last digits depend on the order of addition, is kept.
    const two = randomUUID();
    const costs = [
      ev('create', two, {}),
      child(randomUUID(), two, { cost: 0.1 }),
      child(randomUUID(), two, { cost: 0.2 }),
    ];
    expect(await recounts(costs)).toBe(1);
  });

  it('are the root’s own when the client set them there', async () => {
    const root = randomUUID();
    await applySpanEvents(sql, [child(randomUUID(), root, { cost: 0.3, total_tokens: 30 })]);
    await applySpanEvents(sql, [ev('create', root, { cost: 2, total_tokens: 7 })]);
    expect(await totals(root)).toMatchObject({ cost: 2, tokens: 7 });
  });

  it('sum every child when one trace is written by concurrent transactions', async () => {
    const root = randomUUID();
    const children = Array.from({ length: 30 }, (_, i) =>
      child(randomUUID(), root, { cost: 0.01, total_tokens: i + 1 }),
    );
    // The root among them, so that it is stored before some of its children and after others.
    await Promise.all(
      [ev('create', root, {}), ...children].map((e, i) =>
        applySpanEvents(sql, i % 3 ? [e] : [e, children[(i + 7) % children.length]]),
      ),
    );
    const t = await totals(root);
    expect(t.tokens).toBe((30 * 31) / 2);
    expect(t.cost).toBeCloseTo(0.3);
  });

  it('move with a span created again under another root', async () => {
    const first = randomUUID(),
      second = randomUUID(),
      a = randomUUID();
    await applySpanEvents(sql, [
      ev('create', first, {}),
      ev('create', second, {}),
      child(a, first, { total_tokens: 9 }),
    ]);
    expect(await totals(first)).toMatchObject({ tokens: 9 });
    await applySpanEvents(sql, [child(a, second, { total_tokens: 9 })]);
    expect(await totals(first)).toMatchObject({ tokens: null });
    expect(await totals(second)).toMatchObject({ tokens: 9 });
  });
});

describe('the listing by cost and tokens', () => {
  it('sorts the traces by their totals both ways, those without any last', async () => {
    const project = (await getOrCreateProject(sql, org, 'by-totals')).uuid;
    // [cost, tokens] of each trace, summed over two children, the root stored last.
    const traces: [number | null, number | null][] = [
      [0.3, 500],
      [0.9, 100],
      [null, null],
      [0.1, 900],
      [0.5, 300],
    ];
    const roots: string[] = traces.map(() => randomUUID());
    for (const [i, [cost, tokens]] of traces.entries()) {
      const half = { cost: cost && cost / 2, total_tokens: tokens && tokens / 2 };
      await applySpanEvents(sql, [
        child(randomUUID(), roots[i], half, project),
        child(randomUUID(), roots[i], half, project),
      ]);
    }
    await applySpanEvents(
      sql,
      roots.map((r) => ev('create', r, {}, project)),
    );
    const order = async (sort: RootQuery['sort']) =>
      (await rootIds(sql, { organizationId: org, projectId: project, sort, page: 1, pageSize: 10 })).map((id) =>
        roots.indexOf(id),
      );
    expect(await order('costliest')).toEqual([1, 4, 0, 3, 2]);
    expect(await order('cheapest')).toEqual([3, 0, 4, 1, 2]);
    expect(await order('most_tokens')).toEqual([3, 0, 4, 1, 2]);
    expect(await order('fewest_tokens')).toEqual([1, 4, 0, 3, 2]);
  });
});
