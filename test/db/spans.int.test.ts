import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { applySpanEvents, findTraceTextOf, getOrCreateProject, type Sql } from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { useSql, useStatementCount } from '../support/fixtures';
import { newOrganization } from '../support/services';

const { sql } = useSql();
const countStatements = useStatementCount();
let org: string;
let project: string;
let seq = 1;

beforeAll(async () => {
  org = (await newOrganization(sql)).id;
  project = (await getOrCreateProject(sql, org, 'p')).uuid;
});

const ev = (kind: SpanEvent['kind'], trace_id: string, fields: SpanEvent['fields']): SpanEvent => ({
  kind,
  organization_id: org,
  trace_id,
  seq: seq++,
  fields: kind === 'create' ? { project_id: project, ...fields } : fields,
});

/** Every visible span of the trace that holds `traceId`, as the API writes it; null when there is none. */
async function storedSpans(
  sql: Sql,
  organizationId: string,
  traceId: string,
): Promise<Record<string, unknown>[] | null> {
  const text = await findTraceTextOf(sql, organizationId, traceId);
  return text && text.members.map((m) => JSON.parse(`{${Buffer.from(m).toString()}}`));
}

describe('applySpanEvents', () => {
  it('stores a tree with computed depth, order, latency and tokens, keeping microseconds', async () => {
    const root = randomUUID(),
      child = randomUUID(),
      grandchild = randomUUID();
    // Child and grandchild arrive before the root.
    await applySpanEvents(sql, [
      ev('create', grandchild, {
        root_trace_id: root,
        parent_trace_id: child,
        start_timestamp: '2026-01-01T00:00:02.000001Z',
      }),
    ]);
    await applySpanEvents(sql, [
      ev('create', child, {
        root_trace_id: root,
        parent_trace_id: root,
        start_timestamp: '2026-01-01T00:00:01Z',
        input_tokens: 2,
        output_tokens: 3,
      }),
      ev('create', root, {
        start_timestamp: '2026-01-01T00:00:00Z',
        end_timestamp: '2026-01-01T00:00:03.5Z',
        trace_name: 'r',
        metadata: { a: 1 },
        scores: [{ name: 's', score: 1 }],
      }),
    ]);
    const rows = await storedSpans(sql, org, grandchild);
    const byId = new Map(rows!.map((r) => [r.trace_id, r]));
    expect(byId.get(root)).toMatchObject({
      depth: 0,
      execution_order: 0,
      latency: 3.5,
      metadata: { a: 1 },
      scores: [{ name: 's', score: 1 }],
      start_timestamp: '2026-01-01 00:00:00',
    });
    expect(byId.get(child)).toMatchObject({ depth: 1, execution_order: 1, total_tokens: 5 });
    expect(byId.get(grandchild)).toMatchObject({ depth: 2, execution_order: 2 });
    const [raw] = await sql`select start_ts::text as t from spans where trace_id = ${grandchild}`;
    expect(raw.t).toBe('2026-01-01 00:00:02.000001+00');
  });

  it('keeps an update that arrived before its create, and hides update-only spans', async () => {
    const id = randomUUID();
    const create = ev('create', id, { status: 'success', output: 'x' });
    const update = ev('update', id, { status: 'error', error: 'late' });
    await applySpanEvents(sql, [update]);
    expect(await storedSpans(sql, org, id)).toBeNull();
    await applySpanEvents(sql, [create]);
    await applySpanEvents(sql, [create]); // redelivered
    const [span] = (await storedSpans(sql, org, id))!;
    expect(span).toMatchObject({ status: 'error', error: 'late', output: 'x' });
    const [{ count }] = await sql`select count(*)::int from spans where trace_id = ${id}`;
    expect(count).toBe(1);
  });

  it('places a nested span in the tree when its update was stored before its create', async () => {
    const root = randomUUID(),
      child = randomUUID(),
      grandchild = randomUUID();
    await applySpanEvents(sql, [
      ev('create', root, {}),
      ev('create', child, { root_trace_id: root, parent_trace_id: root }),
    ]);
    // The update names only the root, so until the create comes the span looks like a root of its own.
    await applySpanEvents(sql, [ev('update', grandchild, { root_trace_id: root, output: 'forty-two' })]);
    await applySpanEvents(sql, [ev('create', grandchild, { root_trace_id: root, parent_trace_id: child })]);
    const rows = await storedSpans(sql, org, root);
    const byId = new Map(rows!.map((r) => [r.trace_id, r]));
    expect(byId.get(grandchild)).toMatchObject({ depth: 2, execution_order: 2, output: 'forty-two' });
  });

  it('serializes concurrent batches touching the same span without losing an event', async () => {
    const id = randomUUID();
    const events = [
      ev('create', id, { tags: ['a'] }),
      ...Array.from({ length: 20 }, (_, i) => ev('update', id, { [`output`]: `v${i}` })),
    ];
    await Promise.all(events.map((e) => applySpanEvents(sql, [e])));
    const [span] = (await storedSpans(sql, org, id))!;
    expect(span.output).toBe('v19');
    expect(span.tags).toEqual(['a']);
  });

  it('computes depth when the spans of one trace are written by concurrent transactions', async () => {
    for (let round = 0; round < 5; round++) {
      const root = randomUUID();
      const chain = Array.from({ length: 6 }, () => randomUUID());
      const events = [
        ev('create', root, {}),
        ...chain.map((id, i) =>
          ev('create', id, { root_trace_id: root, parent_trace_id: i === 0 ? root : chain[i - 1] }),
        ),
      ];
      await Promise.all(events.map((e) => applySpanEvents(sql, [e])));
      const rows = await storedSpans(sql, org, root);
      const depth = new Map(rows!.map((r) => [r.trace_id, r.depth]));
      expect(chain.map((id) => depth.get(id))).toEqual([1, 2, 3, 4, 5, 6]);
    }
  });

  it('lets 200 concurrent writers of one trace finish without deadlocks, with a correct tree', async () => {
    const root = randomUUID();
    const children = Array.from({ length: 200 }, () => randomUUID());
    const events = [
      ev('create', root, {}),
      ...children.map((id) => ev('create', id, { root_trace_id: root, parent_trace_id: root })),
    ];
    // The children first, waiting for their root; then the root and an update of every child at once,
    // so that writers of existing rows race the recomputation of their trace.
    await Promise.all(events.slice(1).map((e) => applySpanEvents(sql, [e])));
    const updates = children.map((id) => ev('update', id, { output: 'done' }));
    const results = await Promise.allSettled([events[0], ...updates].map((e) => applySpanEvents(sql, [e])));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const rows = await storedSpans(sql, org, root);
    expect(rows).toHaveLength(201);
    expect(rows!.filter((r) => r.trace_id !== root).every((r) => r.depth === 1)).toBe(true);
    expect(new Set(rows!.map((r) => r.execution_order)).size).toBe(201);
  });

  it('orders a child written at the same moment as its root, whichever commits first', async () => {
    for (let round = 0; round < 40; round++) {
      const root = randomUUID(),
        child = randomUUID();
      await Promise.all([
        applySpanEvents(sql, [ev('create', child, { root_trace_id: root, parent_trace_id: root })]),
        applySpanEvents(sql, [ev('create', root, {})]),
      ]);
      const rows = await storedSpans(sql, org, root);
      expect(rows!.find((r) => r.trace_id === child)).toMatchObject({ depth: 1, execution_order: 1 });
    }
  });

  it('asks the table for spans waiting for their place only where one can be: a new trace holds only its batch’s', async () => {
    // That question was a statement and a plan over the partitions in every completion log's write (issue 39).
    const asks = (events: SpanEvent[]) =>
      countStatements(/depth is null or s\.execution_order is null/, (watched) => applySpanEvents(watched, events));
    // A completion's log: a new trace, its root alone, placed by itself.
    const single = randomUUID();
    expect(await asks([ev('create', single, {})])).toBe(0);
    expect((await storedSpans(sql, org, single))![0]).toMatchObject({ depth: 0, execution_order: 0 });
    // A new trace whose child waits for its place: ordered in the same write.
    const root = randomUUID(),
      child = randomUUID();
    expect(
      await asks([ev('create', root, {}), ev('create', child, { root_trace_id: root, parent_trace_id: root })]),
    ).toBe(1);
    expect((await storedSpans(sql, org, child))!.find((r) => r.trace_id === child)).toMatchObject({
      depth: 1,
      execution_order: 1,
    });
    // A placed span in a trace already stored: others of the trace may be waiting, so the table is asked.
    const late = randomUUID();
    expect(
      await asks([ev('create', late, { root_trace_id: root, parent_trace_id: child, depth: 2, execution_order: 2 })]),
    ).toBe(1);
    expect((await storedSpans(sql, org, late))!.find((r) => r.trace_id === late)).toMatchObject({ depth: 2 });
  });

  it('keeps span_scores equal to the scores the span holds, through updates and deletes', async () => {
    // The score filter reads span_scores; a stale or missing row there would find the wrong traces.
    const id = randomUUID();
    const scoresOf = () =>
      sql`select name, score::float as score from span_scores where organization_id = ${org} and trace_id = ${id} order by name`;
    await applySpanEvents(sql, [
      ev('create', id, {
        scores: [
          { name: 'accuracy', score: 0.4 },
          { name: 'tone', score: 1 },
        ],
      }),
    ]);
    expect(await scoresOf()).toEqual([
      { name: 'accuracy', score: 0.4 },
      { name: 'tone', score: 1 },
    ]);
    await applySpanEvents(sql, [ev('update', id, { scores: [{ name: 'accuracy', score: 0.9 }] })]);
    expect(await scoresOf()).toEqual([{ name: 'accuracy', score: 0.9 }]);
    await applySpanEvents(sql, [ev('update', id, { status: 'success' })]); // scores untouched
    expect(await scoresOf()).toEqual([{ name: 'accuracy', score: 0.9 }]);
    await sql`delete from spans where organization_id = ${org} and trace_id = ${id}`;
    expect(await scoresOf()).toEqual([]);
  });
});

describe('span storage', () => {
  it('compresses large span values with lz4, the cheaper of PostgreSQL’s methods', async () => {
    const id = randomUUID();
    const output = Array.from({ length: 2000 }, (_, i) => `word${i % 50}`).join(' ');
    await applySpanEvents(sql, [ev('create', id, { output, inputs: { prompt: output } })]);
    const [row] = await sql`
      select pg_column_compression(output) as output, pg_column_compression(inputs) as inputs
      from spans where organization_id = ${org} and trace_id = ${id}`;
    expect(row).toEqual({ output: 'lz4', inputs: 'lz4' });
  });
});
