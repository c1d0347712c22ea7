import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, type FilterInput } from '@sightline/core';
import { useSql } from '../support/fixtures';
import { filter as f, filterFailure as failure } from '../support/filters';

// The compiled filters run against the real PostgreSQL: every operator on each kind of field, and
// hostile or malformed data that must neither raise nor match wrongly.

describe('compileFilter against PostgreSQL', () => {
  const { sql } = useSql();
  const org = randomUUID(),
    project = randomUUID(),
    experiment = randomUUID();
  const ids = {
    alpha: randomUUID(),
    bravo: randomUUID(),
    charlie: randomUUID(),
    delta: randomUUID(),
    echo: randomUUID(),
  };
  const ann = (user_id: string, score: unknown, value: string, annotation_name = 'Quality') => ({
    created_at: '2026-01-01T00:00:00Z',
    user_id,
    score,
    value,
    annotation_name,
  });

  beforeAll(async () => {
    const spans = [
      {
        trace_name: 'alpha',
        status: 'ok',
        output: 'hello world',
        execution_order: 9,
        latency: 9,
        cache_hit: true,
        start_ts: '2024-01-01T00:00:00Z',
        tags: ['prod', 'alpha'],
        experiment_uuid: experiment,
        metadata: { n: 9, env: 'prod' },
        inputs: { q: 'hi' },
        configuration: { model: 'gpt-4' },
        scores: [
          { name: 'accuracy', score: 0.9 },
          { name: 'tone', score: 1, reason: 'nice' },
        ],
        annotations: { crit1: { u1: ann('u1', 5, 'good') } },
      },
      {
        trace_name: 'bravo',
        status: 'error',
        output: '50% off_sale',
        execution_order: 10,
        latency: 10,
        cache_hit: false,
        start_ts: '2024-01-02T00:00:00Z',
        tags: ['dev'],
        metadata: { n: 10, env: 'dev' },
        scores: [{ name: 'accuracy', score: 0.2 }],
        annotations: {
          crit1: { u1: ann('u1', 1, 'bad', 'Other'), u2: ann('u2', 4, 'ok') },
          crit2: { u1: ann('u1', 2, 'x') },
        },
      },
      // Wrong JSON shapes and a huge numeric-looking string: filters must not raise on them.
      {
        trace_name: 'charlie',
        start_ts: '2024-01-03T12:00:00.5Z',
        metadata: { n: 'abc', big: '9'.repeat(200_000) },
        scores: { not: 'an array' },
        annotations: { crit1: 'not an object' },
      },
      {
        trace_name: 'delta',
        status: 'ok',
        execution_order: 2,
        tags: [],
        metadata: { n: null, env: 'prod' },
        scores: [{ name: 'fluency', score: '0.75' }],
        annotations: {},
      },
      {
        trace_name: 'echo',
        execution_order: 100,
        metadata: { n: '7' },
        scores: [
          { name: 'accuracy', score: 'high' },
          { name: 7, score: 0.75 },
        ],
        annotations: { crit1: { u3: ann('u3', 'n/a', 'meh') } },
      },
    ];
    for (const s of spans) {
      const id = ids[s.trace_name as keyof typeof ids];
      const json = (x: unknown) => (x === undefined ? null : sql.json(x as never));
      await sql`
        insert into spans (organization_id, project_id, trace_id, root_trace_id, parent_trace_id, created, depth,
          trace_name, status, output, execution_order, latency, cache_hit, start_ts, tags, experiment_uuid,
          metadata, inputs, configuration, scores, annotations)
        values (${org}, ${project}, ${id}, ${id}, ${id}, true, 0,
          ${s.trace_name}, ${s.status ?? null}, ${s.output ?? null}, ${s.execution_order ?? null}, ${s.latency ?? null},
          ${s.cache_hit ?? null}, ${s.start_ts ?? null}, ${s.tags ?? null}::text[], ${s.experiment_uuid ?? null},
          ${json(s.metadata)}::jsonb, ${json(s.inputs)}::jsonb, ${json(s.configuration)}::jsonb,
          ${json(s.scores)}::jsonb, ${json(s.annotations)}::jsonb)`;
    }
  }, 30_000);

  /** trace_names of the project's spans matching the filter, placeholders numbered after the two scoping ones. */
  async function names(input: FilterInput): Promise<string[]> {
    const c = compileFilter(input, 3)!;
    const rows = await sql.unsafe(
      `select s.trace_name from spans s where s.organization_id = $1 and s.project_id = $2 and s.created and ${c.text} order by s.trace_name`,
      [org, project, ...c.params] as never[],
    );
    return rows.map((r) => r.trace_name as string);
  }

  const ALL5 = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
  const cases: [string, FilterInput, string[]][] = [
    // uuid
    ['uuid equals', f('trace_id', 'equals', ids.alpha.toUpperCase()), ['alpha']],
    ['uuid not_equals', f('trace_id', 'not_equals', ids.alpha), ['bravo', 'charlie', 'delta', 'echo']],
    ['uuid in', f('trace_id', 'in', ` ${ids.alpha} , ${ids.bravo}`), ['alpha', 'bravo']],
    ['uuid is_null', f('experiment_uuid', 'is_null'), ['bravo', 'charlie', 'delta', 'echo']],
    ['uuid exists', f('experiment_uuid', 'exists'), ['alpha']],
    // text
    ['text equals', f('status', 'equals', 'ok'), ['alpha', 'delta']],
    ['text not_equals keeps NULLs', f('status', 'not_equals', 'error'), ['alpha', 'charlie', 'delta', 'echo']],
    ['text like is case-insensitive', f('status', 'like', 'ERR'), ['bravo']],
    ['text like escapes %', f('output', 'like', '%'), ['bravo']],
    ['text like escapes _', f('output', 'like', 'f_s'), ['bravo']],
    ['text in', f('status', 'in', 'ok, error'), ['alpha', 'bravo', 'delta']],
    ['text is_null', f('status', 'is_null'), ['charlie', 'echo']],
    ['text exists', f('status', 'exists'), ['alpha', 'bravo', 'delta']],
    ['text greater_than', f('trace_name', 'greater_than', 'charlie'), ['delta', 'echo']],
    ['text greater_than_or_equal', f('trace_name', 'greater_than_or_equal', 'delta'), ['delta', 'echo']],
    ['text less_than', f('trace_name', 'less_than', 'bravo'), ['alpha']],
    ['text less_than_or_equal', f('trace_name', 'less_than_or_equal', 'bravo'), ['alpha', 'bravo']],
    ['text between', f('trace_name', 'between', 'bravo,delta'), ['bravo', 'charlie', 'delta']],
    // integer: 9 < 10 < 100 numerically, not textually
    ['integer equals', f('execution_order', 'equals', '10'), ['bravo']],
    ['integer not_equals', f('execution_order', 'not_equals', '10'), ['alpha', 'charlie', 'delta', 'echo']],
    ['integer greater_than', f('execution_order', 'greater_than', '9'), ['bravo', 'echo']],
    ['integer greater_than_or_equal', f('execution_order', 'greater_than_or_equal', '10'), ['bravo', 'echo']],
    ['integer less_than', f('execution_order', 'less_than', '10'), ['alpha', 'delta']],
    ['integer less_than_or_equal', f('execution_order', 'less_than_or_equal', '9'), ['alpha', 'delta']],
    ['integer between', f('execution_order', 'between', '9,10'), ['alpha', 'bravo']],
    ['integer in', f('execution_order', 'in', '9, 100'), ['alpha', 'echo']],
    ['integer is_null', f('execution_order', 'is_null'), ['charlie']],
    ['integer exists', f('execution_order', 'exists'), ['alpha', 'bravo', 'delta', 'echo']],
    // number
    ['number equals', f('latency', 'equals', '9.0'), ['alpha']],
    ['number not_equals', f('latency', 'not_equals', '9'), ['bravo', 'charlie', 'delta', 'echo']],
    ['number greater_than', f('latency', 'greater_than', '9'), ['bravo']],
    ['number greater_than_or_equal', f('latency', 'greater_than_or_equal', '9'), ['alpha', 'bravo']],
    ['number less_than', f('latency', 'less_than', '10'), ['alpha']],
    ['number less_than_or_equal', f('latency', 'less_than_or_equal', '1e1'), ['alpha', 'bravo']],
    ['number between', f('latency', 'between', '9.5, 10'), ['bravo']],
    ['number in', f('latency', 'in', '9,10'), ['alpha', 'bravo']],
    ['number is_null', f('latency', 'is_null'), ['charlie', 'delta', 'echo']],
    ['number exists', f('latency', 'exists'), ['alpha', 'bravo']],
    // boolean
    ['boolean equals', f('cache_hit', 'equals', 'True'), ['alpha']],
    ['boolean equals 0', f('cache_hit', 'equals', '0'), ['bravo']],
    ['boolean not_equals', f('cache_hit', 'not_equals', 'true'), ['bravo', 'charlie', 'delta', 'echo']],
    ['boolean is_null', f('cache_hit', 'is_null'), ['charlie', 'delta', 'echo']],
    ['boolean exists', f('cache_hit', 'exists'), ['alpha', 'bravo']],
    // timestamp
    ['timestamp equals', f('start_timestamp', 'equals', '2024-01-03T12:00:00.500Z'), ['charlie']],
    [
      'timestamp not_equals',
      f('start_timestamp', 'not_equals', '2024-01-01 00:00:00'),
      ['bravo', 'charlie', 'delta', 'echo'],
    ],
    ['timestamp greater_than', f('start_timestamp', 'greater_than', '2024-01-02T00:00:00Z'), ['charlie']],
    [
      'timestamp greater_than_or_equal',
      f('start_timestamp', 'greater_than_or_equal', '2024-01-02'),
      ['bravo', 'charlie'],
    ],
    ['timestamp less_than', f('start_timestamp', 'less_than', '2024-01-02 00:00:00'), ['alpha']],
    [
      'timestamp less_than_or_equal with zone',
      f('start_timestamp', 'less_than_or_equal', '2024-01-02T01:00:00+01:00'),
      ['alpha', 'bravo'],
    ],
    [
      'timestamp between',
      f('start_timestamp', 'between', '2024-01-01T12:00:00Z, 2024-01-03T12:00:00.5Z'),
      ['bravo', 'charlie'],
    ],
    ['timestamp in', f('start_timestamp', 'in', '2024-01-01, 2024-01-02'), ['alpha', 'bravo']],
    ['timestamp is_null', f('start_timestamp', 'is_null'), ['delta', 'echo']],
    ['timestamp exists', f('start_timestamp', 'exists'), ['alpha', 'bravo', 'charlie']],
    // tags
    ['tags equals', f('tags', 'equals', 'prod'), ['alpha']],
    ['tags not_equals', f('tags', 'not_equals', 'prod'), ['bravo', 'charlie', 'delta', 'echo']],
    ['tags like', f('tags', 'like', 'PRO'), ['alpha']],
    ['tags in', f('tags', 'in', 'dev, nope'), ['bravo']],
    ['tags in with quotes', f('tags', 'in', 'x"y,alpha,\\'), ['alpha']],
    ['tags is_null (null or empty)', f('tags', 'is_null'), ['charlie', 'delta', 'echo']],
    ['tags exists', f('tags', 'exists'), ['alpha', 'bravo']],
    // maps: n is 9, 10, "abc", null, "7"
    ['map equals', f('metadata', 'equals', '10', 'n'), ['bravo']],
    ['map not_equals', f('metadata', 'not_equals', '10', 'n'), ['alpha', 'charlie', 'delta', 'echo']],
    ['map like', f('metadata', 'like', 'AB', 'n'), ['charlie']],
    ['map in', f('metadata', 'in', '9, 7', 'n'), ['alpha', 'echo']],
    ['map greater_than is numeric', f('metadata', 'greater_than', '9', 'n'), ['bravo']],
    ['map greater_than_or_equal', f('metadata', 'greater_than_or_equal', '9', 'n'), ['alpha', 'bravo']],
    ['map less_than', f('metadata', 'less_than', '10', 'n'), ['alpha', 'echo']],
    ['map less_than_or_equal', f('metadata', 'less_than_or_equal', '7', 'n'), ['echo']],
    ['map between', f('metadata', 'between', '8,10', 'n'), ['alpha', 'bravo']],
    ['map text ordering for a non-numeric value', f('metadata', 'greater_than', 'dev', 'env'), ['alpha', 'delta']],
    ['map numeric compare skips a huge stored number', f('metadata', 'greater_than', '1', 'big'), []],
    ['map is_null (absent or JSON null)', f('metadata', 'is_null', undefined, 'n'), ['delta']],
    ['map is_null on absent key', f('metadata', 'is_null', undefined, 'env'), ['charlie', 'echo']],
    ['map exists', f('metadata', 'exists', undefined, 'env'), ['alpha', 'bravo', 'delta']],
    ['inputs', f('inputs', 'equals', 'hi', 'q'), ['alpha']],
    ['configuration', f('configuration', 'like', 'GPT', 'model'), ['alpha']],
    // scores: accuracy is 0.9, 0.2, (not an array), (none), "high"; delta has fluency "0.75", echo has 7 (a number) 0.75
    ['score equals', f('score:accuracy', 'equals', '0.9'), ['alpha']],
    ['score not_equals', f('score:accuracy', 'not_equals', '0.9'), ['bravo', 'echo']],
    ['score greater_than', f('score:accuracy', 'greater_than', '0.5'), ['alpha']],
    ['score greater_than_or_equal', f('score:accuracy', 'greater_than_or_equal', '0.2'), ['alpha', 'bravo']],
    ['score less_than', f('score:accuracy', 'less_than', '0.5'), ['bravo']],
    ['score less_than_or_equal', f('score:accuracy', 'less_than_or_equal', '0.2'), ['bravo']],
    ['score between', f('score:accuracy', 'between', '0.1,0.3'), ['bravo']],
    ['score in', f('score:accuracy', 'in', '0.2, 0.9'), ['alpha', 'bravo']],
    ['score is_null', f('score:accuracy', 'is_null'), ['charlie', 'delta']],
    ['score exists', f('score:accuracy', 'exists'), ['alpha', 'bravo', 'echo']],
    ['score other name', f('score:tone', 'exists'), ['alpha']],
    ['score held as a numeric string', f('score:fluency', 'greater_than', '0.7'), ['delta']],
    ['score held as a numeric string, out of range', f('score:fluency', 'less_than', '0.7'), []],
    ['score with a name that is not a string', f('score:7', 'between', '0.7,0.8'), ['echo']],
    ['score with a name that is not a string, in', f('score:7', 'in', '0.75'), ['echo']],
    // annotations under crit1: alpha u1=5; bravo u1=1, u2=4; charlie (not an object); delta none; echo u3="n/a"
    ['annotation score equals', f('annotation:score:crit1', 'equals', '1'), ['bravo']],
    ['annotation score not_equals', f('annotation:score:crit1', 'not_equals', '5'), ['bravo', 'echo']],
    ['annotation score greater_than', f('annotation:score:crit1', 'greater_than', '4'), ['alpha']],
    [
      'annotation score greater_than_or_equal (any user)',
      f('annotation:score:crit1', 'greater_than_or_equal', '4'),
      ['alpha', 'bravo'],
    ],
    ['annotation score less_than', f('annotation:score:crit1', 'less_than', '2'), ['bravo']],
    ['annotation score less_than_or_equal', f('annotation:score:crit1', 'less_than_or_equal', '5'), ['alpha', 'bravo']],
    ['annotation score between', f('annotation:score:crit1', 'between', '3,4'), ['bravo']],
    ['annotation score in', f('annotation:score:crit1', 'in', '5'), ['alpha']],
    ['annotation is_null', f('annotation:score:crit1', 'is_null'), ['charlie', 'delta']],
    ['annotation exists', f('annotation:score:crit1', 'exists'), ['alpha', 'bravo', 'echo']],
    ['annotation other criterion', f('annotation:value:crit2', 'exists'), ['bravo']],
    ['annotation value equals', f('annotation:value:crit1', 'equals', 'ok'), ['bravo']],
    ['annotation value like', f('annotation:value:crit1', 'like', 'OO'), ['alpha']],
    ['annotation value in', f('annotation:value:crit1', 'in', 'bad,meh'), ['bravo', 'echo']],
    ['annotation value text ordering', f('annotation:value:crit1', 'greater_than', 'meh'), ['bravo']],
    ['annotation user_id', f('annotation:user_id:crit1', 'equals', 'u2'), ['bravo']],
    ['annotation annotation_name', f('annotation:annotation_name:crit1', 'equals', 'Other'), ['bravo']],
    // NUL is stripped
    ['NUL in value', f('status', 'equals', 'o\0k'), ['alpha', 'delta']],
    ['NUL in key', f('metadata', 'equals', 'prod', 'e\0nv'), ['alpha', 'delta']],
    // injection attempts that compile match nothing
    ['injection in value', f('status', 'equals', "'; drop table spans; --"), []],
    ['injection in like value', f('trace_name', 'like', "%' or 1=1 --"), []],
    ['injection in in-list', f('status', 'in', "ok'), ('x'); drop table spans; --"), []],
    ['injection in array literal', f('tags', 'in', 'prod"},{"dev'), []],
    ['injection in key', f('metadata', 'equals', 'x', "metadata') or 1=1 --"), []],
    ['injection in key (quote)', f('metadata', 'exists', undefined, "n' or '1'='1"), []],
    ['injection in score name', f("score:'); drop table spans; --", 'exists'), []],
    ['injection in annotation id', f("annotation:value:x' or 1=1 --", 'exists'), []],
    ['injection in map ordering value', f('metadata', 'less_than', "0') or ('1'='1", 'n'), []],
  ];

  it.each(cases)('%s', async (_name, input, expected) => {
    expect(await names(input)).toEqual(expected);
  });

  it('rejects injection in filter_field and leaves the table intact', async () => {
    for (const field of ["'; drop table spans; --", "metadata') or 1=1 --", 'status; drop table spans', 's.status']) {
      expect(failure(f(field, 'equals', 'x'))).toBe('filter_field');
    }
    const [{ count }] = await sql`select count(*)::int as count from spans where organization_id = ${org}`;
    expect(count).toBe(ALL5.length);
    expect(await names(f('trace_name', 'exists'))).toEqual(ALL5);
  });
});
