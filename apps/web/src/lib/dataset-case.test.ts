import { describe, expect, it } from 'vitest';
import { caseFromTrace } from './dataset-case';

describe('caseFromTrace', () => {
  it('takes the dataset’s columns from the inputs and the target, else the output, as the target', () => {
    const span = { inputs: { question: 'q?', context: 'c', user: 'ada' }, output: 'answer', target: null };
    expect(caseFromTrace(span, ['question', 'context'])).toEqual({
      ok: true,
      inputs: { question: 'q?', context: 'c' },
      target: 'answer',
      dropped: ['user'],
    });
    expect(caseFromTrace({ ...span, target: 'gold' }, ['question'])).toMatchObject({ target: 'gold' });
    expect(caseFromTrace({ inputs: { q: 1 }, output: { a: 1 } }, ['q'])).toMatchObject({ target: '{"a":1}' });
  });
  it('is unfit when the inputs lack a column, naming it', () => {
    expect(caseFromTrace({ inputs: { question: 'q?' } }, ['question', 'context'])).toEqual({
      ok: false,
      missing: ['context'],
    });
    expect(caseFromTrace({ inputs: 'just text' }, ['question'])).toEqual({ ok: false, missing: ['question'] });
  });
});
