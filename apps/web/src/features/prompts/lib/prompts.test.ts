import { describe, expect, it } from 'vitest';
import type { Deployment, PromptVersion } from '../../../api/types';
import { modelParams, paramFields, promptsOf, promptText, templateVariables } from './prompts';

const version = (name: string, version_number: number, content = 'Hi {{name}}'): PromptVersion => ({
  id: version_number + (name === 'b' ? 100 : 0),
  name,
  version_number,
  messages: [{ role: 'user', content }],
  model: 'gpt-4o-mini',
  provider: 'openai',
  model_params: { temperature: 0 },
  created_at: '2026-11-25T00:00:00Z',
});

describe('prompts', () => {
  it('groups versions by name, newest first, each with the deployments pointing into it', () => {
    const deployment = { deployment_id: 'prod', updated_at: '', prompt_version: version('a', 1) } as Deployment;
    const prompts = promptsOf([version('b', 1), version('a', 1), version('a', 2)], [deployment]);
    expect(prompts.map((p) => [p.name, p.versions.map((v) => v.version_number), p.deployments.length])).toEqual([
      ['a', [2, 1], 1],
      ['b', [1], 0],
    ]);
  });
  it('finds the template variables, once each, in order', () => {
    expect(
      templateVariables([{ content: 'Hello {{ name }}, about {{topic}}' }, { content: '{{name}} {{user.id}}' }, {}]),
    ).toEqual(['name', 'topic', 'user.id']);
  });
  it('writes a version as text: model, parameters, then each message under its role', () => {
    expect(promptText(version('a', 1))).toBe(
      'model: gpt-4o-mini\nprovider: openai\ntemperature: 0\n\n[user]\nHi {{name}}',
    );
  });

  it('edits temperature, max tokens, top_p and the response format, and keeps the other parameters', () => {
    const stored = { temp: 0.2, max_length: 300, presence_penalty: 0.5, response_format: { type: 'json_object' } };
    const fields = paramFields(stored);
    expect(fields).toEqual({ temp: 0.2, max_length: 300, top_p: '', response_format: 'json_object' });
    expect(modelParams({ ...fields, top_p: 0.9, max_length: '' }, stored)).toEqual({
      presence_penalty: 0.5,
      temp: 0.2,
      top_p: 0.9,
      response_format: { type: 'json_object' },
    });
    expect(modelParams(paramFields(null), null)).toBeNull();
    expect(modelParams({ ...paramFields(null), response_format: 'json_object' }, null)).toEqual({
      response_format: { type: 'json_object' },
    });
    // A JSON schema the playground cannot edit goes back as it was.
    const schema = { response_format: { type: 'json_schema', json_schema: { name: 'answer' } } };
    expect(modelParams(paramFields(schema), schema)).toEqual(schema);
  });
});
