import { describe, expect, it } from 'vitest';
import { buildLlmRequest, mergeConfiguration } from './request';
import { MissingVariablesError } from './templates';

describe('buildLlmRequest', () => {
  it('maps params, roles, functions, and puts history before messages', () => {
    const req = buildLlmRequest(
      {
        model: 'gpt-4o',
        provider: 'openai',
        model_params: {
          temp: 0.3,
          max_length: 64,
          top_p: 0.9,
          frequency_penalty: 0.1,
          presence_penalty: 0.2,
          response_format: { type: 'json_object' },
        },
        history: [
          { role: 'example_user', content: 'ex q' },
          { role: 'example_assistant', content: 'ex a' },
        ],
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'Hi {{name}}, {{ n }}' },
        ],
        functions: [{ name: 'lookup', description: 'find', parameters: { type: 'object', properties: {} } }],
        function_call: 'lookup',
      },
      { name: 'Ada', n: 3 },
    );
    expect(req).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'ex q' },
        { role: 'assistant', content: 'ex a' },
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'Hi Ada, 3' },
      ],
      params: {
        temperature: 0.3,
        max_tokens: 64,
        top_p: 0.9,
        frequency_penalty: 0.1,
        presence_penalty: 0.2,
        response_format: { type: 'json_object' },
      },
      tools: [{ name: 'lookup', description: 'find', parameters: { type: 'object', properties: {} } }],
      tool_choice: { name: 'lookup' },
    });
  });
  it('names every missing template variable', () => {
    const call = () =>
      buildLlmRequest({ model: 'm', messages: [{ role: 'user', content: '{{a}} {{b}} {{a}}' }] }, { b: 1 });
    expect(call).toThrow(MissingVariablesError);
    expect(call).toThrow('missing template variable: a');
  });
  it('infers the provider from the model when none is given', () => {
    expect(
      buildLlmRequest({ model: 'claude-3-5-haiku-latest', messages: [{ role: 'user', content: 'x' }] }, {}).provider,
    ).toBe('anthropic');
  });
});

describe('mergeConfiguration', () => {
  it('lets the request override the deployed prompt field by field', () => {
    const merged = mergeConfiguration(
      {
        model: 'gpt-4o',
        provider: 'openai',
        model_params: { temp: 0.1, max_length: 10 },
        messages: [{ role: 'user', content: 'deployed' }],
      },
      { model_params: { temp: 0.9 }, messages: [] },
    );
    expect(merged).toMatchObject({
      model: 'gpt-4o',
      provider: 'openai',
      model_params: { temp: 0.9, max_length: 10 },
      messages: [{ role: 'user', content: 'deployed' }],
    });
  });
});
