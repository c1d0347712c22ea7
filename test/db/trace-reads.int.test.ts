import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderTrees } from '@sightline/core';
import { findTraceTextOf, getOrCreateProject, spanTextsOfRoots } from '@sightline/db';
import { useSql } from '../support/fixtures';
import { newOrganization } from '../support/services';

// The serialized reads (PostgreSQL writes each span's JSON, Node nests the bytes) must write every type of
// column as JSON.stringify would write the value, awkward values included, and read large traces, which
// are read in parts, whole.

const { sql } = useSql();
let org: string;
let project: string;

beforeAll(async () => {
  org = (await newOrganization(sql, 'reads')).id;
  project = (await getOrCreateProject(sql, org, 'reads "quoted" \\ project')).uuid;
});

const viaText = (json: Buffer) => JSON.parse(`[${json.toString()}]`);
type Tree = {
  trace_id: string;
  trace_name: string;
  execution_order: number;
  metadata: { n: number };
  children: Tree[];
};

describe('serialized trace reads', () => {
  it('write every column as JSON.stringify would, awkward values included', async () => {
    const root = randomUUID(),
      child = randomUUID(),
      declared = randomUUID(),
      experiment = randomUUID();
    await sql`
      insert into spans (organization_id, trace_id, project_id, root_trace_id, parent_trace_id, created, trace_name, inputs, output,
                         start_ts, end_ts, status, error, configuration, metadata, tags, depth, execution_order, time_to_first_token,
                         latency, input_tokens, total_tokens, cost, evaluation_metric_names, scores, feedback_score, children_ids,
                         apply_eval_frac, cache_hit, session_id, experiment_uuid, images, annotations)
      values (${org}, ${root}, ${project}, ${root}, ${root}, true, ${'quote " backslash \\ newline \n tab \t nul-free \u0001 é 😀'},
              ${sql.json({ messages: [{ role: 'user', content: 'héllo "x"' }], n: 1.5e-7, big: 12345678901234567000, list: [null, true] })},
              ${'out \\u0000 literal'}, '2026-01-02T03:04:05.999999Z', null, 'ok', null, ${sql.json({})},
              ${sql.json({ '10': 'integer-like key', a: { b: [1, 2] } })}, ${['a', 'b "c"']}::text[], 0, 0, 'NaN'::float8,
              'Infinity'::float8, 9007199254740991, 0, 1e-7, array['m1', 'm 2']::text[], ${sql.json([{ name: 's', score: 0.1 }])}, -0.5,
              ${[declared]}::text[], 0.25, false, 'session', ${experiment}, ${sql.json([])}, ${sql.json({ c: { u: { score: 1 } } })}),
             (${org}, ${child}, null, ${root}, ${root}, true, null, null, null, null, null, null, null, null, null, '{}'::text[],
              1, 1, null, null, null, null, null, null, null, null, null, null, true, null, null, null, null)`;
    const text = await findTraceTextOf(sql, org, child);
    const trees = viaText(renderTrees(text!, [root]));
    // NaN and infinities, which JSON lacks, are null; a span without a start takes the time it was stored.
    expect(trees).toEqual([
      {
        trace_id: root,
        root_trace_id: root,
        parent_trace_id: root,
        trace_name: 'quote " backslash \\ newline \n tab \t nul-free \u0001 é 😀',
        project_uuid: project,
        project_name: 'reads "quoted" \\ project',
        organization_id: org,
        inputs: {
          messages: [{ role: 'user', content: 'héllo "x"' }],
          n: 1.5e-7,
          big: 12345678901234567000,
          list: [null, true],
        },
        output: 'out \\u0000 literal',
        target: null,
        start_timestamp: '2026-01-02 03:04:05',
        end_timestamp: null,
        status: 'ok',
        error: null,
        configuration: {},
        metadata: { '10': 'integer-like key', a: { b: [1, 2] } },
        tags: ['a', 'b "c"'],
        depth: 0,
        execution_order: 0,
        time_to_first_token: null,
        latency: null,
        input_tokens: 9007199254740991,
        output_tokens: null,
        total_tokens: 0,
        cost: 1e-7,
        usage_estimated: false,
        output_for_eval_metrics: null,
        evaluation_metric_names: ['m1', 'm 2'],
        scores: [{ name: 's', score: 0.1 }],
        feedback_score: -0.5,
        feedback_comment: null,
        apply_eval_frac: 0.25,
        log_sample_rate: 1,
        deployment_id: null,
        cache_hit: false,
        end_user_identifier: null,
        session_id: 'session',
        experiment_uuid: experiment,
        images: [],
        comments: [],
        annotations: { c: { u: { score: 1 } } },
        children_ids: [child, declared],
        children: [
          {
            trace_id: child,
            root_trace_id: root,
            parent_trace_id: root,
            trace_name: null,
            project_uuid: null,
            project_name: null,
            organization_id: org,
            inputs: null,
            output: null,
            target: null,
            start_timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
            end_timestamp: null,
            status: null,
            error: null,
            configuration: null,
            metadata: null,
            tags: [],
            depth: 1,
            execution_order: 1,
            time_to_first_token: null,
            latency: null,
            input_tokens: null,
            output_tokens: null,
            total_tokens: null,
            cost: null,
            usage_estimated: false,
            output_for_eval_metrics: null,
            evaluation_metric_names: null,
            scores: [],
            feedback_score: null,
            feedback_comment: null,
            apply_eval_frac: 1,
            log_sample_rate: 1,
            deployment_id: null,
            cache_hit: true,
            end_user_identifier: null,
            session_id: null,
            experiment_uuid: null,
            images: [],
            comments: [],
            annotations: {},
            children_ids: [],
            children: [],
          },
        ],
      },
    ]);
    expect(viaText(renderTrees(await spanTextsOfRoots(sql, org, [root]), [root]))).toEqual(trees);
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
    const [tree]: Tree[] = viaText(renderTrees(text, [root]));
    expect(tree.children).toHaveLength(90);
    expect(tree.children[89].children).toHaveLength(100);
    // Every span once, with its own fields, its children in execution order.
    const seen = new Set<string>();
    const visit = (span: Tree) => {
      seen.add(span.trace_id);
      expect(span).toMatchObject({ trace_name: `span ${span.execution_order}`, metadata: { n: span.execution_order } });
      expect(span.children.map((c) => c.execution_order)).toEqual(
        span.children.map((c) => c.execution_order).sort((a, b) => a - b),
      );
      span.children.forEach(visit);
    };
    visit(tree);
    expect(seen.size).toBe(9091);
  });
});
