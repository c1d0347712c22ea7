import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  applySpanEvents,
  countRoots,
  getOrCreateProject,
  rootIds,
  rootListingSql,
  type RootQuery,
} from '@sightline/db';
import type { SpanEvent } from '@sightline/schemas';
import { useSql } from '../support/fixtures';
import { newOrganization } from '../support/services';

// trace_roots, the narrow copy of each trace's root that counts and filtered sorts read (migration 00031), is
// kept equal to the spans table's created roots by triggers, whatever path writes them; and a listing read
// from it matches the same listing read from spans.

const { sql } = useSql();
let org: string;
let project: string;
let seq = 1;

beforeAll(async () => {
  org = (await newOrganization(sql, 'trace-roots')).id;
  project = (await getOrCreateProject(sql, org, 'roots')).uuid;
});

const ev = (kind: SpanEvent['kind'], trace_id: string, fields: SpanEvent['fields']): SpanEvent => ({
  kind,
  organization_id: org,
  trace_id,
  seq: seq++,
  fields: kind === 'create' ? { project_id: project, ...fields } : fields,
});
const child = (id: string, root: string, fields: SpanEvent['fields'] = {}) =>
  ev('create', id, { root_trace_id: root, parent_trace_id: root, ...fields });

const COPIED = `trace_id, project_id, start_ts, end_ts, created_at, latency, trace_name, status, end_user_identifier,
  session_id, experiment_uuid, feedback_score, trace_cost, trace_tokens, metadata, tags`;

/** The organization's copy, and the created roots of spans it copies: they must be equal. */
async function expectCopyEqual(): Promise<number> {
  const copy = await sql.unsafe(`select ${COPIED} from trace_roots where organization_id = $1 order by trace_id`, [
    org,
  ]);
  const roots = await sql.unsafe(
    `select ${COPIED} from spans where organization_id = $1 and depth = 0 and created order by trace_id`,
    [org],
  );
  expect(copy).toEqual(roots);
  return copy.length;
}

describe('trace_roots, the listing’s copy of the roots', () => {
  it('follows a root created after its children, then updated, renamed and given feedback and totals', async () => {
    const root = randomUUID();
    await applySpanEvents(sql, [child(randomUUID(), root, { cost: 0.25, total_tokens: 100 })]);
    // The root exists only as its children's placeholder: not created, not copied.
    expect(await sql`select from trace_roots where organization_id = ${org} and trace_id = ${root}`).toHaveLength(0);
    await applySpanEvents(sql, [ev('create', root, { trace_name: 'first', metadata: { env: 'prod' }, tags: ['a'] })]);
    expect(await expectCopyEqual()).toBeGreaterThan(0);
    await applySpanEvents(sql, [
      ev('update', root, { trace_name: 'second', status: 'error', metadata: { env: 'dev', region: 'eu' } }),
      child(randomUUID(), root, { cost: 0.5, total_tokens: 7 }),
    ]);
    await sql`update spans set feedback_score = 0.5 where organization_id = ${org} and trace_id = ${root}`;
    await expectCopyEqual();
    const [row] = await sql`select * from trace_roots where organization_id = ${org} and trace_id = ${root}`;
    expect(row).toMatchObject({ trace_name: 'second', status: 'error', feedback_score: 0.5, trace_tokens: 107 });
    expect(row.metadata).toEqual({ env: 'dev', region: 'eu' });
  });

  it('drops a root that becomes another trace’s span, and a deleted root', async () => {
    const [a, b, moved] = [randomUUID(), randomUUID(), randomUUID()];
    await applySpanEvents(sql, [ev('create', a, { trace_name: 'a' }), ev('create', moved, { trace_name: 'moved' })]);
    // Created again under another root, and placed under it by the tree's recompute: no longer a root.
    await applySpanEvents(sql, [ev('create', b, { trace_name: 'b' }), child(moved, b)]);
    await sql`update spans set depth = 1 where organization_id = ${org} and trace_id = ${moved}`;
    await expectCopyEqual();
    expect(await sql`select from trace_roots where organization_id = ${org} and trace_id = ${moved}`).toHaveLength(0);
    await sql`delete from spans where organization_id = ${org} and trace_id = ${a}`;
    await expectCopyEqual();
    expect(await sql`select from trace_roots where organization_id = ${org} and trace_id = ${a}`).toHaveLength(0);
  });

  it('lists and counts the same traces as the spans table, in the same order, under filters', async () => {
    const other = (await getOrCreateProject(sql, org, 'other')).uuid;
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth,
                         trace_name, start_ts, status, metadata, tags, trace_cost, trace_tokens, feedback_score,
                         experiment_uuid, scores)
      select ${org}::uuid, id, case when i % 9 = 0 then ${other}::uuid else ${project}::uuid end, id, id, true, 0,
             'n' || (i % 3), now() - i * interval '1 minute', case when i % 5 = 0 then 'error' else 'success' end,
             jsonb_build_object('env', case when i % 2 = 0 then 'prod' else 'dev' end), array['t' || (i % 4)],
             case when i % 6 = 0 then null else (i * 37 % 101) / 100.0 end, case when i % 8 = 0 then null else i * 13 % 97 end,
             (i % 10) / 10.0, case when i % 7 = 0 then gen_random_uuid() end,
             jsonb_build_array(jsonb_build_object('name', 'accuracy', 'score', (i % 11) / 10.0))
      from (select gen_random_uuid() as id, i from generate_series(1, 600) i) g`;
    await expectCopyEqual();
    const filters = [
      { filter_field: 'trace_name', filter_operator: 'equals', filter_value: 'n1' },
      { filter_field: 'metadata', filter_key: 'env', filter_operator: 'equals', filter_value: 'prod' },
      { filter_field: 'score:accuracy', filter_operator: 'greater_than_or_equal', filter_value: '0.5' },
    ];
    const sorts = ['costliest', 'cheapest', 'most_tokens', 'fewest_tokens', 'best_feedback', 'newest'] as const;
    for (const sort of sorts)
      for (const includeExperiments of [true, false]) {
        const q: RootQuery = {
          organizationId: org,
          projectId: project,
          filters,
          sort,
          includeExperiments,
          page: 2,
          pageSize: 10,
        };
        expect(rootListingSql(q).source).toBe('trace_roots');
        const onSpans = await spansListing(q);
        expect(await rootIds(sql, q)).toEqual(onSpans.ids);
        expect(await countRoots(sql, q)).toBe(onSpans.total);
        expect(onSpans.total).toBeGreaterThan(20);
      }
  });
});

/** The listing as the spans table answers it: the listing's order and conditions, with `s.created and s.depth = 0`. */
async function spansListing(q: RootQuery): Promise<{ ids: string[]; total: number }> {
  const order = {
    costliest: 's.trace_cost desc nulls last, s.trace_id desc',
    cheapest: 's.trace_cost asc nulls last, s.trace_id asc',
    most_tokens: 's.trace_tokens desc nulls last, s.trace_id desc',
    fewest_tokens: 's.trace_tokens asc nulls last, s.trace_id asc',
    best_feedback: 's.feedback_score desc nulls last, s.trace_id desc',
    newest: 's.start_ts desc nulls last, s.trace_id desc',
  }[q.sort as string]!;
  const where = `s.organization_id = $1 and s.project_id = $2 and s.created and s.depth = 0
    and s.trace_name = 'n1' and s.metadata @> '{"env": "prod"}'
    and exists (select from span_scores sc where sc.organization_id = s.organization_id and sc.trace_id = s.trace_id
                and sc.name = 'accuracy' and sc.score >= 0.5)
    ${q.includeExperiments === false ? 'and s.experiment_uuid is null' : ''}`;
  const ids = await sql.unsafe(`select s.trace_id from spans s where ${where} order by ${order} limit 10 offset 10`, [
    q.organizationId,
    q.projectId,
  ]);
  const [{ total }] = await sql.unsafe(`select count(*)::int as total from spans s where ${where}`, [
    q.organizationId,
    q.projectId,
  ]);
  return { ids: ids.map((r) => r.trace_id as string), total: total as number };
}
