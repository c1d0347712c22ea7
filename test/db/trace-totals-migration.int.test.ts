import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, ensureOrganization, getOrCreateProject, migrate, rootIds, type Sql } from '@sightline/db';
import { databaseUrl } from '../support/services';

// Traces stored before their totals were (migrations 00026 and 00030) get them, and sort by them at once.

let url: string;
let sql: Sql;
let admin: Sql;
let org: string;
let project: string;
const [summed, own, empty] = [randomUUID(), randomUUID(), randomUUID()];

beforeAll(async () => {
  const base = new URL(databaseUrl());
  base.pathname = `/${base.pathname.slice(1)}_trace_totals_${randomBytes(3).toString('hex')}`;
  url = base.toString();
  await migrate(url, undefined, { upTo: 25 });
  sql = createSql(url, { max: 2 });
  admin = createSql(databaseUrl(), { max: 1 });
  org = await ensureOrganization(sql, 'before-totals');
  project = (await getOrCreateProject(sql, org, 'p')).uuid;
  // [trace_id, root, created, cost, total_tokens]: `summed` sums its created spans, `own` keeps the root's own
  // figures, `empty` has none.
  const spans: [string, string, boolean, number | null, number | null][] = [
    [summed, summed, true, null, null],
    [randomUUID(), summed, true, 0.25, 10],
    [randomUUID(), summed, true, 0.5, 20],
    [randomUUID(), summed, false, 4, 400],
    [own, own, true, 0.1, 5],
    [randomUUID(), own, true, 3, 300],
    [empty, empty, true, null, null],
  ];
  for (const [id, root, created, cost, tokens] of spans) {
    // Children are calls to a model (`own`'s to another), with input and output tokens; `own`'s root has its own input.
    const child = id !== root;
    const model = child ? (root === own ? 'claude' : 'gpt-4o') : null;
    const input = child ? tokens! / 10 : root === own ? 1 : null;
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, depth, cost,
                         total_tokens, input_tokens, output_tokens, configuration)
      values (${org}, ${id}, ${project}, ${root}, ${root}, ${created}, ${child ? 1 : 0}, ${cost}, ${tokens},
              ${input}, ${child ? tokens! / 5 : null}, ${model && sql.json({ model })})`;
  }
  await migrate(url);
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await admin?.unsafe(`drop database if exists "${new URL(url).pathname.slice(1)}" with (force)`);
  await admin?.end();
});

describe('migrating stored traces to stored totals', () => {
  it('gives each root its trace’s totals', async () => {
    const rows = await sql<{ trace_id: string; trace_cost: number | null; trace_tokens: number | null }[]>`
      select trace_id, trace_cost, trace_tokens from spans where organization_id = ${org} and depth = 0`;
    const byId = new Map(rows.map((r) => [r.trace_id, r]));
    expect(byId.get(summed)?.trace_cost).toBeCloseTo(0.75);
    expect(byId.get(summed)?.trace_tokens).toBe(30);
    expect(byId.get(own)).toMatchObject({ trace_cost: 0.1, trace_tokens: 5 });
    expect(byId.get(empty)).toMatchObject({ trace_cost: null, trace_tokens: null });
  });

  it('gives each root its input and output tokens and its calls and cost by model (migration 00030)', async () => {
    const rows = await sql<{ trace_id: string; usage: unknown }[]>`
      select trace_id, jsonb_build_array(trace_input_tokens, trace_output_tokens, trace_models) as usage
      from spans where organization_id = ${org} and depth = 0`;
    const byId = new Map(rows.map((r) => [r.trace_id, r.usage]));
    expect(byId.get(summed)).toEqual([3, 6, [{ model: 'gpt-4o', calls: 2, cost: 0.75 }]]);
    expect(byId.get(own)).toEqual([1, 60, [{ model: 'claude', calls: 1, cost: 3 }]]);
    expect(byId.get(empty)).toEqual([null, null, null]);
  });

  it('lists them by cost and tokens', async () => {
    const order = async (sort: 'costliest' | 'fewest_tokens') =>
      rootIds(sql, { organizationId: org, projectId: project, sort, page: 1, pageSize: 10 });
    expect(await order('costliest')).toEqual([summed, own, empty]);
    expect(await order('fewest_tokens')).toEqual([own, summed, empty]);
  });
});
