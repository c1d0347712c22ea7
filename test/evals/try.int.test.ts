import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';

const {
  stack,
  orgs: [{ key }],
} = useStack({ orgs: ['try-metrics'] });
const tryMetric = (body: object) => call(stack.app, key, 'POST', '/eval-metrics/try', body);

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
    expect((await call(stack.app, key, 'GET', '/eval-metrics')).json()).toEqual([]);
  });

  it('answers 422 where creating would, and for a judge (which only the worker runs)', async () => {
    const unsafe = await tryMetric({
      metric: { name: 'x', type: 'regex_match', config: { pattern: '(a+)+$' } },
      output: 'aaa',
    });
    expect(unsafe.statusCode).toBe(422);
    expect(unsafe.json().detail[0].loc).toEqual(['body', 'metric', 'config', 'pattern']);
    const badSchema = await tryMetric({
      metric: { name: 'x', type: 'json_schema', config: { schema: { type: 'no-such-type' } } },
      output: '{}',
    });
    expect(badSchema.statusCode).toBe(422);
    expect(badSchema.json().detail[0].loc).toEqual(['body', 'metric', 'config', 'schema']);
    const judge = await tryMetric({
      metric: { name: 'x', type: 'llm_judge', config: { prompt_template: 'p', provider: 'openai', model: 'm' } },
      output: 'o',
    });
    expect(judge.statusCode).toBe(422);
  });
});
