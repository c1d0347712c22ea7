import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileFilter, FILTER_OPERATORS, type FilterInput } from './filters';
import { filter as f, filterFailure as failure } from '../../../test/support/filters';

describe('compileFilter (pure)', () => {
  it('exports the 11 operators', () => {
    expect(FILTER_OPERATORS).toHaveLength(11);
  });

  it('returns null without a filter_field', () => {
    expect(compileFilter({}, 1)).toBeNull();
    expect(compileFilter({ filter_field: '', filter_operator: 'equals', filter_value: 'x' }, 1)).toBeNull();
    expect(compileFilter({ filter_field: null }, 1)).toBeNull();
  });

  it('compiles a scalar comparison with a numbered, cast placeholder and the alias', () => {
    expect(compileFilter(f('status', 'equals', 'ok'), 3)).toEqual({ text: '(s.status = $3::text)', params: ['ok'] });
    expect(compileFilter(f('start_timestamp', 'greater_than', '2026-01-02 03:04:05'), 1, 'sp')).toEqual({
      text: '(sp.start_ts > $1::timestamptz)',
      params: ['2026-01-02T03:04:05.000000Z'],
    });
    expect(compileFilter(f('status', 'not_equals', 'error'), 1)!.text).toBe('(s.status IS DISTINCT FROM $1::text)');
    expect(compileFilter(f('depth', 'between', ' 1 , 3 '), 5)).toEqual({
      text: '(s.depth BETWEEN $5::bigint AND $6::bigint)',
      params: ['1', '3'],
    });
    expect(compileFilter(f('latency', 'is_null', 'ignored'), 1)).toEqual({ text: '(s.latency IS NULL)', params: [] });
    expect(compileFilter(f('cache_hit', 'exists'), 1)).toEqual({ text: '(s.cache_hit IS NOT NULL)', params: [] });
    expect(compileFilter(f('cache_hit', 'equals', 'TRUE'), 1)!.params).toEqual([true]);
    expect(compileFilter(f('cache_hit', 'equals', '0'), 1)!.params).toEqual([false]);
  });

  it('escapes LIKE wildcards and the escape character', () => {
    expect(compileFilter(f('output', 'like', '50%_\\'), 1)).toEqual({
      text: '(s.output ILIKE $1::text)',
      params: ['%50\\%\\_\\\\%'],
    });
  });

  it('sends in-lists as trimmed, escaped array literals', () => {
    expect(compileFilter(f('status', 'in', ' ok , error,, a"b\\ '), 1)).toEqual({
      text: '(s.status = ANY($1::text[]))',
      params: ['{"ok","error","a\\"b\\\\"}'],
    });
    const id = randomUUID();
    expect(compileFilter(f('trace_id', 'in', `${id.toUpperCase()}`), 1)).toEqual({
      text: '(s.trace_id = ANY($1::uuid[]))',
      params: [`{"${id}"}`],
    });
  });

  it('puts map keys, score names and annotation ids in params, never in the text', () => {
    const key = "k') or 1=1 --";
    const m = compileFilter(f('metadata', 'equals', 'v', key), 2)!;
    expect(m).toEqual({ text: '(s.metadata @> jsonb_build_object($2::text, $3::text))', params: [key, 'v'] });
    const s = compileFilter(f("score:x' or 1=1", 'greater_than', '0.5'), 1)!;
    expect(s.params).toEqual(["x' or 1=1", '0.5']);
    const a = compileFilter(f("annotation:value:a:b'--", 'equals', 'good'), 1)!;
    expect(a.params).toEqual(["a:b'--", 'good']);
    for (const c of [m, s, a]) expect(c.text).not.toMatch(/'--|1=1|'v'|good/);
  });

  it('casts every placeholder', () => {
    const inputs: FilterInput[] = [
      f('metadata', 'between', '1,2', 'n'),
      f('metadata', 'in', 'a,b', 'n'),
      f('tags', 'not_equals', 'x'),
      f('tags', 'in', 'x,y'),
      f('score:acc', 'in', '1,2'),
      f('annotation:score:c', 'between', '1,2'),
      f('annotation:user_id:c', 'like', 'u'),
      f('end_timestamp', 'in', '2026-01-01'),
      f('experiment_uuid', 'equals', randomUUID()),
    ];
    for (const input of inputs) expect(compileFilter(input, 7)!.text).not.toMatch(/\$\d+(?!\d|::)/);
  });

  it('strips NUL from values and keys', () => {
    expect(compileFilter(f('metadata', 'equals', 'a\0b', 'k\0'), 1)!.params).toEqual(['k', 'ab']);
    expect(failure(f('status', 'equals', '\0'))).toBe('filter_value');
    expect(failure(f('metadata', 'exists', undefined, '\0'))).toBe('filter_key');
  });

  it('numbers comparisons numerically for map values only when the filter value is numeric', () => {
    expect(compileFilter(f('metadata', 'greater_than', '9', 'n'), 1)!.text).toContain('::numeric END) > $2::numeric');
    expect(compileFilter(f('metadata', 'greater_than', 'abc', 'n'), 1)!.text).toBe(
      '((s.metadata ->> $1::text) > $2::text)',
    );
    expect(compileFilter(f('metadata', 'between', '1,abc', 'n'), 1)!.text).toContain('BETWEEN $2::text AND $3::text');
    expect(compileFilter(f('metadata', 'equals', '9', 'n'), 1)!.text).toBe(
      '(s.metadata @> jsonb_build_object($1::text, $2::text) OR s.metadata @> jsonb_build_object($1::text, $3::numeric))',
    );
  });

  it.each([
    // unknown or malformed fields
    [f('nope', 'equals', 'x'), 'filter_field'],
    [f('feedback_comment', 'equals', 'x'), 'filter_field'],
    [f('constructor', 'equals', 'x'), 'filter_field'],
    [f("'; drop table spans; --", 'equals', 'x'), 'filter_field'],
    [f('score:', 'exists'), 'filter_field'],
    [f('annotation:score:', 'exists'), 'filter_field'],
    [f('annotation:score', 'exists'), 'filter_field'],
    [f('annotation:created_at:c1', 'exists'), 'filter_field'],
    // operators
    [f('status'), 'filter_operator'],
    [f('status', 'contains', 'x'), 'filter_operator'],
    [f('status', 'EQUALS', 'x'), 'filter_operator'],
    [f('latency', 'like', '1'), 'filter_operator'],
    [f('trace_id', 'greater_than', randomUUID()), 'filter_operator'],
    [f('cache_hit', 'in', 'true'), 'filter_operator'],
    [f('tags', 'greater_than', 'a'), 'filter_operator'],
    [f('tags', 'between', 'a,b'), 'filter_operator'],
    [f('score:acc', 'like', '1'), 'filter_operator'],
    [f('annotation:score:c1', 'like', '1'), 'filter_operator'],
    // map keys
    [f('metadata', 'equals', 'x'), 'filter_key'],
    [f('inputs', 'exists', undefined, ''), 'filter_key'],
    // values
    [f('status', 'equals'), 'filter_value'],
    [f('status', 'equals', ''), 'filter_value'],
    [f('tags', 'equals'), 'filter_value'],
    [f('status', 'in', ' , '), 'filter_value'],
    [f('depth', 'between', '1'), 'filter_value'],
    [f('depth', 'between', '1,2,3'), 'filter_value'],
    [f('depth', 'between', '1,'), 'filter_value'],
    [f('trace_id', 'equals', 'not-a-uuid'), 'filter_value'],
    [f('trace_id', 'in', `${randomUUID()},x`), 'filter_value'],
    [f('cache_hit', 'equals', 'yes'), 'filter_value'],
    [f('start_timestamp', 'equals', 'yesterday'), 'filter_value'],
    [f('start_timestamp', 'equals', '2026-02-30T00:00:00Z'), 'filter_value'],
    [f('score:acc', 'equals', 'high'), 'filter_value'],
    [f('annotation:score:c1', 'greater_than', 'abc'), 'filter_value'],
    ...['NaN', 'Infinity', '-Infinity', '1e999', ' ', '0x10', '1_000', '1,5', '--1', '.'].map(
      (v) => [f('latency', 'equals', v), 'filter_value'] as const,
    ),
    ...['1.5', '1e3', '9223372036854775808', '-9223372036854775809', 'abc'].map(
      (v) => [f('depth', 'equals', v), 'filter_value'] as const,
    ),
  ] as const)('rejects %o naming %s', (input, field) => {
    expect(failure(input)).toBe(field);
  });

  it('accepts the edges of the accepted ranges and ignores the value of is_null / exists', () => {
    for (const v of ['9223372036854775807', '-9223372036854775808', '+0'])
      expect(failure(f('total_tokens', 'equals', v))).toBe('no error');
    for (const v of ['1e308', '-.5', '5.', '+1E-3']) expect(failure(f('cost', 'equals', v))).toBe('no error');
    for (const v of ['2026-01-02', '2026-01-02T03:04Z', '2026-01-02T03:04:05.123456+05:30', '2026-01-02 03:04:05']) {
      expect(failure(f('end_timestamp', 'less_than', v))).toBe('no error');
    }
    for (const field of ['status', 'tags', 'score:x', 'annotation:value:c'])
      expect(failure(f(field, 'is_null'))).toBe('no error');
    expect(failure(f('metadata', 'exists', undefined, 'k'))).toBe('no error');
  });
});

// ---- against a real PostgreSQL --------------------------------------------------------------------
