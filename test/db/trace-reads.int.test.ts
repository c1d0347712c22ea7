import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTrees, renderTrees } from '@sightline/core';
import { findTraceOf, findTraceTextOf, getOrCreateProject, spansOfRoots, spanTextsOfRoots } from '@sightline/db';
import { useSql } from '../support/fixtures';
import { newOrganization } from '../support/services';

// The serialized reads (PostgreSQL writes each span's JSON, Node nests the bytes) must answer exactly what
// the object reads answer once serialized: every type of column, awkward values, and large traces, which
// are read in parts.

const { sql } = useSql();
let org: string;
let project: string;

beforeAll(async () => {
  org = (await newOrganization(sql, 'reads')).id;
  project = (await getOrCreateProject(sql, org, 'reads "quoted" \\ project')).uuid;
});

/** The trees as the object path serializes them. */
const viaObjects = (rows: Parameters<typeof buildTrees>[0], ids: string[]) => JSON.parse(JSON.stringify(buildTrees(rows, ids)));
const viaText = (json: Buffer) => JSON.parse(`[${json.toString()}]`);

describe('serialized trace reads', () => {
  it('write every column as the object reads serialize it, awkward values included', async () => {
    const root = randomUUID(), child = randomUUID(), declared = randomUUID();
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, trace_name, inputs, output,
                         start_ts, end_ts, status, error, configuration, metadata, tags, depth, execution_order, time_to_first_token,
                         latency, input_tokens, total_tokens, cost, evaluation_metric_names, scores, feedback_score, children_ids,
                         apply_eval_frac, cache_hit, session_id, experiment_uuid, images, annotations)
      values (${org}, ${root}, ${project}, ${root}, ${root}, true, ${'quote " backslash \\ newline \n tab \t nul-free \u0001 é 😀'},
              ${sql.json({ messages: [{ role: 'user', content: 'héllo "x"' }], n: 1.5e-7, big: 12345678901234567890, list: [null, true] })},
              ${'out \\u0000 literal'}, '2026-01-02T03:04:05.999999Z', null, 'ok', null, ${sql.json({})},
              ${sql.json({ '10': 'integer-like key', a: { b: [1, 2] } })}, ${['a', 'b "c"']}::text[], 0, 0, 'NaN'::float8,
              'Infinity'::float8, 9007199254740991, 0, 1e-7, array['m1', 'm 2']::text[], ${sql.json([{ name: 's', score: 0.1 }])}, -0.5,
              ${[declared]}::text[], 0.25, false, 'session', ${randomUUID()}, ${sql.json([])}, ${sql.json({ c: { u: { score: 1 } } })}),
             (${org}, ${child}, null, ${root}, ${root}, true, null, null, null, null, null, null, null, null, null, '{}'::text[],
              1, 1, null, null, null, null, null, null, null, null, null, null, true, null, null, null, null)`;
    const text = await findTraceTextOf(sql, org, child);
    expect(viaText(renderTrees(text!, [root]))).toEqual(viaObjects((await findTraceOf(sql, org, child))!, [root]));
    const [tree] = viaText(renderTrees(text!, [root]));
    expect(tree).toMatchObject({ start_timestamp: '2026-01-02 03:04:05', time_to_first_token: null, latency: null, children_ids: [child, declared] });
    expect(viaText(renderTrees(await spanTextsOfRoots(sql, org, [root]), [root]))).toEqual(viaObjects(await spansOfRoots(sql, org, [root]), [root]));
    expect(await findTraceTextOf(sql, org, randomUUID())).toBeNull();
  });

  it('read a trace of thousands of spans in parts, each span once', async () => {
    const root = randomUUID();
    // A root, 90 steps under it, 100 calls under each step: 9,091 spans.
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, trace_name, output, start_ts,
                         depth, execution_order, metadata)
      select ${org}::uuid, case when n = 0 then ${root}::uuid else md5(${root} || n)::uuid end, ${project}::uuid, ${root}::uuid,
             case when n = 0 then ${root}::uuid when n <= 90 then ${root}::uuid else md5(${root} || (1 + (n - 91) / 100))::uuid end,
             true, 'span ' || n, repeat('x', 200), '2026-01-01'::timestamptz + n * interval '1 ms', case when n = 0 then 0 when n <= 90 then 1 else 2 end,
             n, jsonb_build_object('n', n)
      from generate_series(0, 9090) n`;
    const text = (await findTraceTextOf(sql, org, root))!;
    expect(new Set(text.trace_id).size).toBe(9091);
    const trees = viaText(renderTrees(text, [root]));
    expect(trees).toEqual(viaObjects((await findTraceOf(sql, org, root))!, [root]));
    expect(trees[0].children).toHaveLength(90);
    expect(trees[0].children[89].children).toHaveLength(100);
  });
});
