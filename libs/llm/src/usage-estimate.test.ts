import { countTokens as claudeTokens } from '@anthropic-ai/tokenizer';
import { countTokens as o200kTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { costOf } from './pricing';
import { estimateSpanUsage } from './usage-estimate';

const question = 'What is the capital of France? Answer in one word.';
const answer = 'Paris.';
const llmSpan = (model: string, provider: string, over: Record<string, unknown> = {}) => ({
  configuration: { model, provider, messages: [{ role: 'user', content: question }] },
  output: answer,
  ...over,
});

describe('estimateSpanUsage', () => {
  it("counts an OpenAI model's span with its encoding, framing included, and prices it", () => {
    const estimate = estimateSpanUsage(llmSpan('gpt-4o-mini', 'openai'));
    // One message: 3 tokens of framing for it and 3 to prime the reply (OpenAI's rule of thumb).
    const input = 3 + 3 + o200kTokens(question);
    const output = o200kTokens(answer);
    expect(estimate).toEqual({
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      cost: costOf('openai', 'gpt-4o-mini', { input_tokens: input, output_tokens: output }).cost,
    });
    expect(estimate!.cost).toBeGreaterThan(0);
  });

  it("counts Claude's span with the tokenizer Anthropic publishes", () => {
    const estimate = estimateSpanUsage(llmSpan('claude-3-5-haiku-20241022', 'anthropic'));
    expect(estimate).toMatchObject({
      input_tokens: 3 + 3 + claudeTokens(question),
      output_tokens: claudeTokens(answer),
    });
    expect(estimate!.cost).toBeGreaterThan(0);
  });

  it('reads content parts and tool calls, leaving images out', () => {
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } };
    const calls = [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }];
    const estimate = estimateSpanUsage({
      configuration: {
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: [{ type: 'text', text: question }, image] },
          { role: 'assistant', content: null, tool_calls: calls },
        ],
      },
      output: answer,
    });
    // The text part and the calls' JSON (a long run without spaces is counted in slices: a token or two off).
    const texts = o200kTokens(`${question}\n`) + o200kTokens(`\n${JSON.stringify(calls)}`);
    expect(Math.abs(estimate!.input_tokens - (3 * 2 + 3 + texts))).toBeLessThanOrEqual(2);
    // The image's 100,000 base64 characters would have counted as tens of thousands of tokens.
    expect(estimate!.input_tokens).toBeLessThan(100);
  });

  it('keeps a cost the span sent, and leaves the cost out for a model the tables do not price', () => {
    expect(estimateSpanUsage(llmSpan('gpt-4o-mini', 'openai', { cost: 0.25 }))!.cost).toBe(0.25);
    expect(estimateSpanUsage(llmSpan('gpt-4o-mini-my-finetune-2099', 'acme'))).toMatchObject({ cost: null });
  });

  it('estimates nothing for a span with usage, without a model it knows the tokenizer of, or without text', () => {
    expect(estimateSpanUsage(llmSpan('gpt-4o', 'openai', { output_tokens: 3 }))).toBeNull();
    expect(estimateSpanUsage(llmSpan('gpt-4o', 'openai', { total_tokens: 9 }))).toBeNull();
    expect(estimateSpanUsage(llmSpan('llama-3.1-8b-instruct', 'vllm'))).toBeNull();
    expect(estimateSpanUsage(llmSpan('gpt-4o', 'openai', { output: null }))).toBeNull();
    expect(estimateSpanUsage({ output: answer })).toBeNull();
    expect(estimateSpanUsage({ configuration: { model: 'gpt-4o', messages: [] }, output: answer })).toBeNull();
  });
});
