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
    const safe = (p: string) => !/\+\)\+/.test(p);
    expect(jsonSchemaError({ type: 'no-such-type' }, safe)).toEqual(expect.any(String));
    expect(jsonSchemaError(schema, safe)).toBeNull();
    expect(jsonSchemaError({ properties: { a: { type: 'string', pattern: '(a+)+$' } } }, safe)).toMatch(/exponential/);
  });
  it('json_schema: a schema with an $id neither clashes with itself nor leaks to another', () => {
    const schema = { $id: 'https://example.com/order', type: 'object', required: ['id'] };
    for (let i = 0; i < 3; i++)
      expect(m.json_schema(io('{"id": 1}'), { schema: { ...schema } })).toMatchObject({ score: 1 });
    expect(jsonSchemaError({ $ref: 'https://example.com/order' }, () => true)).toEqual(expect.any(String));
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
