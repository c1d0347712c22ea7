import { describe, expect, it } from 'vitest';
import { costOf } from './pricing';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { COUNTED_CHARS, countMessageTokens, countTextTokens } from './tokens';

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
  it('counts text that looks like a special token as the text it is', () => {
    expect(countTextTokens('gpt-4o', '<|endoftext|>')).toBe(
      countTokens('<|endoftext|>', { disallowedSpecial: new Set() }),
    );
    expect(countTextTokens('gpt-4o', '<|endoftext|>')).toBeGreaterThan(1);
  });
  // Unbounded, BPE on a 1 MB run without a space takes minutes (its time grows with the run's square).
  it('counts a 1 MB run without a space, exactly where slices fall on token boundaries', () => {
    const run = 'a'.repeat(8 * COUNTED_CHARS);
    expect(countTextTokens('gpt-4o', run.slice(0, COUNTED_CHARS))).toBe(
      countTokens('a'.repeat(64)) * (COUNTED_CHARS / 64),
    );
    expect(countTextTokens('gpt-4o', run)).toBe(8 * countTextTokens('gpt-4o', run.slice(0, COUNTED_CHARS)));
    expect(countMessageTokens('gpt-4o', [{ role: 'user', content: run }])).toBe(3 + 3 + countTextTokens('gpt-4o', run));
  });
  it('estimates past the counted characters at the counted rate, within 1% of the full count', () => {
    // Text of an even density (the estimate assumes the rest reads like the counted part).
    const prose = Array.from(
      { length: 6000 },
      (_, i) => `Per section ${i % 97}, the answer cites the policy ${i % 13}.`,
    ).join('\n');
    expect(prose.length).toBeGreaterThan(4 * COUNTED_CHARS);
    const exact = countTokens(prose);
    expect(Math.abs(countTextTokens('gpt-4o', prose) - exact) / exact).toBeLessThan(0.01);
    // Spread over messages, the counted characters are shared: the same estimate within framing.
    const halves = [prose.slice(0, prose.length / 2), prose.slice(prose.length / 2)];
    const asMessages = countMessageTokens(
      'gpt-4o',
      halves.map((content) => ({ role: 'user' as const, content })),
    );
    expect(Math.abs(asMessages - 3 - 6 - exact) / exact).toBeLessThan(0.01);
  });
});
