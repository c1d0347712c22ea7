import { describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';

const {
  gw,
  orgs: [{ key }, { key: otherKey }],
} = useGateway({ orgs: ['org', 'org'] });

const v1 = {
  name: 'support-bot',
  messages: [
    { role: 'system', content: 'You help {{company}} customers.' },
    { role: 'user', content: 'Question: {{question}}' },
  ],
  model: 'gpt-4o-mini',
  provider: 'openai',
  model_params: { temp: 0.1, max_length: 200 },
  functions: [
    {
      name: 'lookup_order',
      description: 'find an order',
      parameters: { type: 'object', properties: { id: { type: 'string' } } },
    },
  ],
  function_call: 'auto',
};

async function deploy(version: object, deployment_id?: string) {
  const created = (await call(gw.stack.app, key, 'POST', '/prompts', version)).json();
  const deployed = await call(gw.stack.app, key, 'POST', '/deployments', {
    prompt_version_id: created.id,
    ...(deployment_id && { deployment_id }),
  });
  return { version: created, deployment: deployed.json() };
}

describe('deployed prompts', () => {
  it('numbers versions per name and lists them', async () => {
    const a = (await call(gw.stack.app, key, 'POST', '/prompts', { ...v1, name: 'numbered' })).json();
    const b = (await call(gw.stack.app, key, 'POST', '/prompts', { ...v1, name: 'numbered' })).json();
    expect([a.version_number, b.version_number]).toEqual([1, 2]);
    const listed = (await call(gw.stack.app, key, 'GET', '/prompts?name=numbered')).json();
    expect(listed.map((v: { version_number: number }) => v.version_number)).toEqual([2, 1]);
    expect((await call(gw.stack.app, otherKey, 'GET', '/prompts?name=numbered')).json()).toEqual([]);
  });

  it('returns a deployed prompt with templates filled from llm_inputs and raw messages as written', async () => {
    const { deployment } = await deploy(v1);
    const res = await call(gw.stack.app, key, 'POST', '/deployed-prompt', {
      deployment_id: deployment.deployment_id,
      llm_inputs: { company: 'Acme', question: 'Where is my order?' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      deployment_id: deployment.deployment_id,
      version_number: 1,
      name: 'support-bot',
      // Both official clients type deployed functions as strings: each one's JSON text.
      functions: [expect.any(String)],
      function_call: 'auto',
      prompt: {
        raw_messages: v1.messages,
        messages: [
          { role: 'system', content: 'You help Acme customers.' },
          { role: 'user', content: 'Question: Where is my order?' },
        ],
        inputs: { company: 'Acme', question: 'Where is my order?' },
      },
      model: 'gpt-4o-mini',
      provider: 'openai',
      model_params: { temp: 0.1, max_length: 200 },
    });
    expect(res.json().functions.map((f: string) => JSON.parse(f))).toEqual(v1.functions);
  });

  it('runs a completion from a deployment, with llm_configuration overriding it', async () => {
    const { deployment } = await deploy(v1, 'dep-override');
    const res = await call(gw.stack.app, key, 'POST', '/completion', {
      deployment_id: 'dep-override',
      llm_inputs: { company: 'Acme', question: 'refund?' },
      llm_configuration: { model_params: { temp: 0.9 } },
    });
    expect(res.json()).toMatchObject({ status: 'success', content: 'echo: Question: refund?', model: 'gpt-4o-mini' });
    expect(gw.openai.requests.at(-1)!.body).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0.9,
      max_tokens: 200,
      tools: [{ function: { name: 'lookup_order' } }],
    });
    expect((await readTrace(gw.stack.app, key, res.json().trace_id)).json()).toMatchObject({
      deployment_id: deployment.deployment_id,
    });
  });

  it('moves a deployment to a newer version under the same id', async () => {
    await deploy(v1, 'dep-moving');
    const v2 = (
      await call(gw.stack.app, key, 'POST', '/prompts', {
        ...v1,
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'v2: {{question}}' }],
      })
    ).json();
    const moved = (
      await call(gw.stack.app, key, 'POST', '/deployments', { prompt_version_id: v2.id, deployment_id: 'dep-moving' })
    ).json();
    expect(moved.prompt_version.version_number).toBe(v2.version_number);
    const res = (
      await call(gw.stack.app, key, 'POST', '/completion', { deployment_id: 'dep-moving', inputs: { question: 'hi' } })
    ).json();
    expect(res).toMatchObject({ content: 'echo: v2: hi', model: 'gpt-4o' });
  });

  it('fills templates from inputs over llm_inputs, on the deployed prompt as on a completion', async () => {
    await deploy(v1, 'dep-both-inputs');
    const body = {
      deployment_id: 'dep-both-inputs',
      inputs: { company: 'Acme', question: 'from inputs' },
      llm_inputs: { company: 'Other', question: 'from llm_inputs' },
    };
    const prompt = (await call(gw.stack.app, key, 'POST', '/deployed-prompt', body)).json();
    expect(prompt.prompt.messages.at(-1)).toEqual({ role: 'user', content: 'Question: from inputs' });
    expect(prompt.prompt.inputs).toEqual(body.inputs);
    const completion = (await call(gw.stack.app, key, 'POST', '/completion', body)).json();
    expect(completion).toMatchObject({ status: 'success', content: 'echo: Question: from inputs' });
    // A missing variable is named under the field the inputs came from.
    const missing = await call(gw.stack.app, key, 'POST', '/deployed-prompt', {
      deployment_id: 'dep-both-inputs',
      llm_inputs: { company: 'Acme' },
    });
    expect(missing.json().detail).toEqual([
      { loc: ['body', 'llm_inputs', 'question'], msg: "missing template variable 'question'", type: 'missing' },
    ]);
  });

  it('answers 404 for an unknown deployment or one of another organization', async () => {
    await deploy(v1, 'dep-private');
    for (const [k, id] of [
      [key, 'dep-unknown'],
      [otherKey, 'dep-private'],
    ]) {
      const prompt = await call(gw.stack.app, k, 'POST', '/deployed-prompt', { deployment_id: id });
      expect(prompt.statusCode).toBe(404);
      const completion = await call(gw.stack.app, k, 'POST', '/completion', {
        deployment_id: id,
        inputs: { company: 'x', question: 'y' },
      });
      expect(completion.statusCode).toBe(404);
      expect(completion.json().detail).toMatch(/deployment/);
    }
    const v = (await call(gw.stack.app, key, 'POST', '/prompts', v1)).json();
    expect((await call(gw.stack.app, otherKey, 'POST', '/deployments', { prompt_version_id: v.id })).statusCode).toBe(
      404,
    );
  });
});

describe('model parameters of a prompt version', () => {
  const create = (model_params: object, name = 'params') =>
    call(gw.stack.app, key, 'POST', '/prompts', { ...v1, name, model_params });

  it("stores the providers' names under api.md's, and calls the model with them", async () => {
    const res = await create({ temperature: 0.7, max_tokens: 100, top_p: 0.9, temp: 0.7 }, 'aliased');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().model_params).toEqual({ temp: 0.7, max_length: 100, top_p: 0.9 });
    expect((await call(gw.stack.app, key, 'GET', '/prompts?name=aliased')).json()[0].model_params).toEqual({
      temp: 0.7,
      max_length: 100,
      top_p: 0.9,
    });
    await call(gw.stack.app, key, 'POST', '/deployments', {
      prompt_version_id: res.json().id,
      deployment_id: 'dep-aliased',
    });
    const prompt = (await call(gw.stack.app, key, 'POST', '/deployed-prompt', { deployment_id: 'dep-aliased' })).json();
    expect(prompt.model_params).toEqual({ temp: 0.7, max_length: 100, top_p: 0.9 });
    const completion = await call(gw.stack.app, key, 'POST', '/completion', {
      deployment_id: 'dep-aliased',
      inputs: { company: 'Acme', question: 'q' },
    });
    expect(completion.json()).toMatchObject({ status: 'success' });
    expect(gw.openai.requests.at(-1)!.body).toMatchObject({ temperature: 0.7, max_tokens: 100, top_p: 0.9 });
    // A second version that changes only the temperature differs from the first.
    const v2 = (await create({ temperature: 0.2, max_tokens: 100, top_p: 0.9 }, 'aliased')).json();
    expect(v2.model_params).toEqual({ temp: 0.2, max_length: 100, top_p: 0.9 });
  });

  it('refuses, naming it, a parameter it does not know, one given twice with two values, and a provider no provider is; stores nothing', async () => {
    const unknown = await create({ temp: 0.1, top_k: 5 }, 'refused');
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail).toEqual([
      {
        loc: ['body', 'model_params', 'top_k'],
        msg: expect.stringMatching(/^unknown model parameter top_k; known: temp/),
        type: 'custom',
      },
    ]);
    const twice = await create({ temp: 0.1, temperature: 0.5 }, 'refused');
    expect(twice.statusCode).toBe(422);
    expect(twice.json().detail).toEqual([
      {
        loc: ['body', 'model_params', 'temperature'],
        msg: 'temperature and temp are the same parameter: give one',
        type: 'custom',
      },
    ]);
    const outOfRange = await create({ temperature: 5 }, 'refused');
    expect(outOfRange.statusCode).toBe(422);
    expect(outOfRange.json().detail[0].loc).toEqual(['body', 'model_params', 'temperature']);
    const provider = await call(gw.stack.app, key, 'POST', '/prompts', {
      ...v1,
      name: 'refused',
      provider: 'p'.repeat(65),
    });
    expect(provider.statusCode).toBe(422);
    expect(provider.json().detail[0].loc).toEqual(['body', 'provider']);
    expect((await call(gw.stack.app, key, 'GET', '/prompts?name=refused')).json()).toEqual([]);
  });

  it('takes a parameter given as null as not given, as the Python client sends them', async () => {
    const res = await create({ temp: 0.3, max_length: null, response_format: null, safe_prompt: null }, 'nulls');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().model_params).toEqual({ temp: 0.3 });
  });
});
