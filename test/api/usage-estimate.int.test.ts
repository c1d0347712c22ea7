import { randomUUID } from 'node:crypto';
import { countTokens as claudeTokens } from '@anthropic-ai/tokenizer';
import { describe, expect, it } from 'vitest';
import { costOf } from '@sightline/llm';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// An LLM span logged without usage gets its tokens counted with its model's tokenizer and priced, marked as
// estimated, until usage arrives for it.

const {
  stack,
  orgs: [{ key }],
} = useStack({ orgs: ['usage-estimate'] });

const MODEL = 'claude-3-5-haiku-20241022';
const question = 'Which river runs through Paris? One word, please.';
const answer = 'The Seine.';
const claudeCall = { model: MODEL, provider: 'anthropic', messages: [{ role: 'user', content: question }] };
const post = (body: object) => call(stack.app, key, 'POST', '/trace_log', body);
const traceRow = async (project_name: string) => {
  const project = (await call(stack.app, key, 'POST', '/project', { name: project_name })).json();
  const res = await call(stack.app, key, 'POST', '/traces', { project_uuid: project.uuid });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().results[0];
};

describe('an LLM span logged without usage', () => {
  it("is counted with its model's tokenizer and priced, marked as estimated, in the span and its trace", async () => {
    const project_name = `estimate-${randomUUID()}`;
    const root = randomUUID();
    const llm = randomUUID();
    expect((await post({ trace_id: root, project_name, trace_name: 'agent', output: answer })).statusCode).toBe(200);
    const logged = await post({
      trace_id: llm,
      root_trace_id: root,
      parent_trace_id: root,
      project_name,
      trace_name: 'chat',
      configuration: claudeCall,
      output: answer,
    });
    expect(logged.statusCode).toBe(200);

    // One message: 3 tokens of framing for it and 3 to prime the reply.
    const input = 3 + 3 + claudeTokens(question);
    const output = claudeTokens(answer);
    const cost = costOf('anthropic', MODEL, { input_tokens: input, output_tokens: output }).cost;
    expect(cost).toBeGreaterThan(0);
    const tree = (await readTrace(stack.app, key, root)).json();
    expect(tree).toMatchObject({ input_tokens: null, cost: null, usage_estimated: false });
    expect(tree.children[0]).toMatchObject({
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      cost,
      usage_estimated: true,
    });
    // The trace's totals count the estimate, and say so.
    expect(await traceRow(project_name)).toMatchObject({ cost, total_tokens: input + output, usage_estimated: true });
  });

  it('has its estimate replaced by the usage that arrives later', async () => {
    const project_name = `estimate-${randomUUID()}`;
    const trace_id = randomUUID();
    await post({ trace_id, project_name, trace_name: 'chat', configuration: claudeCall, output: answer });
    expect((await readTrace(stack.app, key, trace_id)).json()).toMatchObject({ usage_estimated: true });

    const usage = { input_tokens: 31, output_tokens: 4, cost: 0.000042 };
    const put = await call(stack.app, key, 'PUT', '/trace_log', { trace_id, field_name_to_value_map: usage });
    expect(put.statusCode).toBe(200);
    expect((await readTrace(stack.app, key, trace_id)).json()).toMatchObject({
      ...usage,
      total_tokens: 35,
      usage_estimated: false,
    });
    expect(await traceRow(project_name)).toMatchObject({ ...usage, total_tokens: 35, usage_estimated: false });

    // A later write of anything else (feedback) keeps the usage sent, estimating nothing.
    await call(stack.app, key, 'POST', '/feedback', { trace_id, score: 1 });
    expect((await readTrace(stack.app, key, trace_id)).json()).toMatchObject({
      ...usage,
      feedback_score: 1,
      usage_estimated: false,
    });
  });

  it('is left without usage when its model has no tokenizer known here, or it has no output', async () => {
    const project_name = `estimate-${randomUUID()}`;
    const [unknown, silent] = [randomUUID(), randomUUID()];
    await post({
      trace_id: unknown,
      project_name,
      configuration: { ...claudeCall, model: 'llama-3.1-8b-instruct', provider: 'vllm' },
      output: answer,
    });
    await post({ trace_id: silent, project_name, configuration: claudeCall });
    for (const id of [unknown, silent])
      expect((await readTrace(stack.app, key, id)).json()).toMatchObject({
        input_tokens: null,
        output_tokens: null,
        cost: null,
        usage_estimated: false,
      });
  });
});
