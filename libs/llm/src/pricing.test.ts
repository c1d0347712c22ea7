import { describe, expect, it } from 'vitest';
import { costOf } from './pricing';
import { countMessageTokens, countTextTokens } from './tokens';

describe('costOf', () => {
  it('prices known models from the maintained tables', () => {
    const { cost, known } = costOf('openai', 'gpt-4o-mini', 1_000_000, 1_000_000);
    expect(known).toBe(true);
    expect(cost).toBeGreaterThan(0.5);
    expect(costOf('anthropic', 'claude-3-5-haiku-latest', 1000, 100).known).toBe(true);
  });
  it('says when it does not know a model rather than inventing a price', () => {
    expect(costOf('vllm', 'my-finetune', 10, 10)).toEqual({ cost: 0, known: false });
  });
});

describe('token counting', () => {
  it('counts with a real tokenizer', () => {
    expect(countTextTokens('gpt-4o', 'hello world')).toBe(2);
    expect(countMessageTokens('gpt-4', [{ role: 'user', content: 'hello world' }])).toBe(3 + 2 + 3);
  });
});
