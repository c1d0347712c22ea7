import { describe, expect, it } from 'vitest';
import { costOf } from './pricing';
import { countMessageTokens, countTextTokens } from './tokens';

describe('costOf', () => {
  it('prices known models from the maintained tables', () => {
    const { cost, known } = costOf('openai', 'gpt-4o-mini', { input_tokens: 1_000_000, output_tokens: 1_000_000 });
    expect(known).toBe(true);
    expect(cost).toBeGreaterThan(0.5);
    expect(costOf('anthropic', 'claude-3-5-haiku-latest', { input_tokens: 1000, output_tokens: 100 }).known).toBe(true);
  });
  it('says when it does not know a model rather than inventing a price', () => {
    expect(costOf('vllm', 'my-finetune', { input_tokens: 10, output_tokens: 10 })).toEqual({ cost: 0, known: false });
  });
  it('prices cached prompt tokens at the cache rate', () => {
    const full = costOf('anthropic', 'claude-3-5-haiku-latest', { input_tokens: 10_000, output_tokens: 0 }).cost;
    const cached = costOf('anthropic', 'claude-3-5-haiku-latest', {
      input_tokens: 10_000,
      output_tokens: 0,
      cache_read_tokens: 9_000,
    }).cost;
    expect(cached).toBeLessThan(full / 2);
  });
});

describe('token counting', () => {
  it('counts with a real tokenizer', () => {
    expect(countTextTokens('gpt-4o', 'hello world')).toBe(2);
    expect(countMessageTokens('gpt-4', [{ role: 'user', content: 'hello world' }])).toBe(3 + 2 + 3);
  });
});
