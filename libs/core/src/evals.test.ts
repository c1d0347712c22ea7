import { describe, expect, it } from 'vitest';
import { deterministicMetrics as m, jsonSchemaError, judgePrompt, parseJudgeAnswer } from './evals';

const io = (output: string, target: string | null = null) => ({ output, target, inputs: {} });

describe('built-in metrics', () => {
  it('levenshtein: 1 - distance / longest', () => {
    expect(m.levenshtein(io('kitten', 'sitting'), null)).toMatchObject({ score: 1 - 3 / 7 });
    expect(m.levenshtein(io('same', 'same'), null)).toMatchObject({ score: 1 });
    expect(m.levenshtein(io('abc'), null)).toEqual({ error: expect.stringContaining('target') });
  });
  it('exact_match', () => {
    expect(m.exact_match(io(' Paris ', 'Paris'), null)).toMatchObject({ score: 1 });
    expect(m.exact_match(io('paris', 'Paris'), null)).toMatchObject({ score: 0 });
    expect(m.exact_match(io('paris', 'Paris'), { case_sensitive: false })).toMatchObject({ score: 1 });
  });
  it('contains: the target or a configured value', () => {
    expect(m.contains(io('the answer is 42', '42'), null)).toMatchObject({ score: 1 });
    expect(m.contains(io('the answer is 41', '42'), null)).toMatchObject({ score: 0 });
    expect(m.contains(io('I am sorry'), { value: 'sorry' })).toMatchObject({ score: 1 });
    expect(m.contains(io('x'), null)).toEqual({ error: expect.any(String) });
  });
  it('regex_match', () => {
    expect(m.regex_match(io('order #123'), { pattern: '#\\d+' })).toMatchObject({ score: 1 });
    expect(m.regex_match(io('ORDER'), { pattern: 'order' })).toMatchObject({ score: 0 });
    expect(m.regex_match(io('ORDER'), { pattern: 'order', flags: 'i' })).toMatchObject({ score: 1 });
    expect(m.regex_match(io('a\nb'), { pattern: '^b$', flags: 'm' })).toMatchObject({ score: 1 });
    expect(m.regex_match(io('a\nb'), { pattern: 'a.b', flags: 's' })).toMatchObject({ score: 1 });
  });
  it('regex_match runs on RE2: no catastrophic backtracking, and no backreferences', () => {
    // A backtracking engine takes about a minute on this, doubling with each `a`.
    expect(m.regex_match(io(`${'a'.repeat(32)}!`), { pattern: '^(a|a)+$' })).toMatchObject({ score: 0 });
    expect(m.regex_match(io('a'.repeat(100_000)), { pattern: '^(a|a)+$' })).toMatchObject({ score: 1 });
    // A pattern saved before patterns were checked against RE2 cannot run: the metric throws, which the
    // worker records as the span's evaluation error.
    expect(() => m.regex_match(io('aa'), { pattern: '(a)\\1' })).toThrow(/backreferences/);
  });
  it('json_valid', () => {
    expect(m.json_valid(io('{"a": 1}'), null)).toMatchObject({ score: 1 });
    expect(m.json_valid(io('{a: 1}'), null)).toMatchObject({ score: 0 });
  });
  it('json_schema, with a maintained validator', () => {
    const schema = { type: 'object', required: ['city'], properties: { city: { type: 'string' } } };
    expect(m.json_schema(io('{"city": "Oslo"}'), { schema })).toMatchObject({ score: 1 });
    expect(m.json_schema(io('{"city": 3}'), { schema })).toMatchObject({
      score: 0,
      reason: expect.stringContaining('city'),
    });
    expect(m.json_schema(io('nope'), { schema })).toMatchObject({ score: 0 });
    expect(jsonSchemaError({ type: 'no-such-type' })).toEqual(expect.any(String));
    expect(jsonSchemaError(schema)).toBeNull();
  });
  it('json_schema: patterns run on RE2, and are refused where RE2 cannot run them', () => {
    const pattern = { type: 'string', pattern: '^(a|a)+$' };
    expect(m.json_schema(io(JSON.stringify(`${'a'.repeat(32)}!`)), { schema: pattern })).toMatchObject({ score: 0 });
    const keys = { type: 'object', patternProperties: { '^(a|a)+$': { type: 'number' } } };
    expect(m.json_schema(io(JSON.stringify({ [`${'a'.repeat(32)}!`]: 'x' })), { schema: keys })).toMatchObject({
      score: 1,
    });
    expect(jsonSchemaError(pattern)).toBeNull();
    expect(jsonSchemaError({ properties: { a: { pattern: '(a)\\1' } } })).toMatch(/"\(a\)\\\\1".*backreferences/);
    expect(jsonSchemaError({ patternProperties: { '^(?!x)': { type: 'number' } } })).toMatch(/lookarounds/);
    // Distinct patterns are distinct validators, though ajv caches compiled patterns by their text.
    expect(m.json_schema(io('"b"'), { schema: { pattern: '^b$' } })).toMatchObject({ score: 1 });
    expect(m.json_schema(io('"b"'), { schema: { pattern: '^c$' } })).toMatchObject({ score: 0 });
  });
  it('json_schema: an output nested deeper than the validator can recurse scores 0, never throws', () => {
    const schema = { $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' };
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    expect(m.json_schema(io(deep), { schema })).toEqual({ score: 0, reason: 'output nests deeper than 256 levels' });
    expect(m.json_schema(io('['.repeat(256) + ']'.repeat(256)), { schema })).toMatchObject({ score: 1 });
    // A schema that recurses without descending into the output overflows on any output.
    const loop = { $defs: { n: { allOf: [{ $ref: '#/$defs/n' }] } }, $ref: '#/$defs/n' };
    expect(m.json_schema(io('1'), { schema: loop })).toEqual({ error: expect.stringContaining('recursed too deeply') });
  });
  it('json_schema: a schema with an $id neither clashes with itself nor leaks to another', () => {
    const schema = { $id: 'https://example.com/order', type: 'object', required: ['id'] };
    for (let i = 0; i < 3; i++)
      expect(m.json_schema(io('{"id": 1}'), { schema: { ...schema } })).toMatchObject({ score: 1 });
    expect(jsonSchemaError({ $ref: 'https://example.com/order' })).toEqual(expect.any(String));
  });
});

describe('llm judge', () => {
  it('fills output, target and inputs into the prompt', () => {
    expect(
      judgePrompt('Q: {{inputs.q}} A: {{output}} Gold: {{ target }} {{other}}', {
        output: 'o',
        target: 't',
        inputs: { q: 'why' },
      }),
    ).toBe('Q: why A: o Gold: t {{other}}');
  });
  it('reads a score in 0..1 with its reason, and never guesses', () => {
    expect(parseJudgeAnswer('{"score": 0.8, "reason": "close"}')).toEqual({ score: 0.8, reason: 'close' });
    expect(parseJudgeAnswer('Sure! ```json\n{"score": "1", "reason": "exact"}\n```')).toEqual({
      score: 1,
      reason: 'exact',
    });
    expect(parseJudgeAnswer('Score: 0.25 because it is partial')).toMatchObject({ score: 0.25 });
    expect(parseJudgeAnswer('{"score": 7}')).toEqual({ error: expect.any(String) });
    expect(parseJudgeAnswer('I think it is good')).toEqual({ error: expect.stringContaining('no score') });
    expect(parseJudgeAnswer('{"score": ""}')).toEqual({ error: expect.any(String) });
    expect(parseJudgeAnswer('where score: 0 is bad and 1 is good, my final score: 0.9')).toMatchObject({ score: 0.9 });
  });
});
