import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useGateway } from '../support/fixtures';

const {
  gw,
  orgs: [{ key }],
} = useGateway({ orgs: ['try-metrics'] });
const tryMetric = (body: object) => call(gw.stack.app, key, 'POST', '/eval-metrics/try', body);

describe('POST /eval-metrics/try', () => {
  it('scores an output with a metric as it would be created, and saves nothing', async () => {
    const exact = await tryMetric({
      metric: { name: 'x', type: 'exact_match', config: { case_sensitive: false } },
      output: ' Paris ',
      target: 'paris',
    });
    expect(exact.statusCode, exact.body).toBe(200);
    expect(exact.json()).toMatchObject({ score: 1 });
    const regex = await tryMetric({
      metric: { name: 'x', type: 'regex_match', config: { pattern: '^\\d+$' } },
      output: '42a',
    });
    expect(regex.json()).toMatchObject({ score: 0 });
    const schema = await tryMetric({
      metric: { name: 'x', type: 'json_schema', config: { schema: { type: 'object', required: ['a'] } } },
      output: '{"a": 1}',
    });
    expect(schema.json()).toMatchObject({ score: 1 });
    // Without a target, a metric that needs one says so instead of scoring.
    const levenshtein = await tryMetric({ metric: { name: 'x', type: 'levenshtein' }, output: 'abc' });
    expect(levenshtein.json()).toEqual({ error: 'levenshtein needs a target on the span' });
    expect((await call(gw.stack.app, key, 'GET', '/eval-metrics')).json()).toEqual([]);
  });

  it('answers 422 where creating would', async () => {
    const unsupported = await tryMetric({
      metric: { name: 'x', type: 'regex_match', config: { pattern: '(a)\\1' } },
      output: 'aa',
    });
    expect(unsupported.statusCode).toBe(422);
    expect(unsupported.json().detail).toEqual([
      {
        loc: ['body', 'metric', 'config', 'pattern'],
        msg: expect.stringMatching(/RE2.*backreferences/),
        type: 'custom',
      },
    ]);
    const lookahead = await tryMetric({
      metric: { name: 'x', type: 'json_schema', config: { schema: { properties: { a: { pattern: 'a(?=b)' } } } } },
      output: '{}',
    });
    expect(lookahead.statusCode).toBe(422);
    expect(lookahead.json().detail[0]).toMatchObject({
      loc: ['body', 'metric', 'config', 'schema'],
      msg: expect.stringContaining('pattern "a(?=b)"'),
    });
    const badSchema = await tryMetric({
      metric: { name: 'x', type: 'json_schema', config: { schema: { type: 'no-such-type' } } },
      output: '{}',
    });
    expect(badSchema.statusCode).toBe(422);
    expect(badSchema.json().detail[0].loc).toEqual(['body', 'metric', 'config', 'schema']);
  });

  it('runs a pattern that would backtrack catastrophically in linear time, in a regex or a schema', async () => {
    // A backtracking engine takes about a minute on this output, blocking the API meanwhile.
    const output = `${'a'.repeat(32)}!`;
    const regex = await tryMetric({
      metric: { name: 'r', type: 'regex_match', config: { pattern: '^(a|a)+$' } },
      output,
    });
    expect(regex.statusCode, regex.body).toBe(200);
    expect(regex.json()).toMatchObject({ score: 0 });
    const schema = await tryMetric({
      metric: { name: 's', type: 'json_schema', config: { schema: { pattern: '^(a|a)+$' } } },
      output: JSON.stringify(output),
    });
    expect(schema.statusCode, schema.body).toBe(200);
    expect(schema.json()).toMatchObject({ score: 0 });
  });

  it('scores 0 an output nested deeper than a recursive schema can be checked on', async () => {
    const res = await tryMetric({
      metric: {
        name: 'n',
        type: 'json_schema',
        config: { schema: { $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' } },
      },
      output: '['.repeat(400_000) + ']'.repeat(400_000),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ score: 0, reason: 'output nests deeper than 256 levels' });
  });

  it('tries a judge through the gateway: its prompt filled from the output and target, its answer read as the score', async () => {
    // The fake provider echoes the last user message: the filled template is the judge's answer.
    const judge = await tryMetric({
      metric: {
        name: 'graded',
        type: 'llm_judge',
        config: {
          provider: 'openai',
          model: 'gpt-4o-mini',
          prompt_template: '{"score": 0.75, "reason": "judged {{output}} against {{target}}"}',
        },
      },
      output: 'Paris',
      target: 'paris',
    });
    expect(judge.statusCode, judge.body).toBe(200);
    expect(judge.json()).toEqual({ score: 0.75, reason: 'judged Paris against paris' });
    expect(gw.openai.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: '{"score": 0.75, "reason": "judged Paris against paris"}' },
    ]);
  });
});
