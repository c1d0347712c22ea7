import { randomBytes, randomUUID } from 'node:crypto';
import { calcPrice } from '@pydantic/genai-prices';
import pino, { type Logger } from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';
import { newOrganization } from '../support/services';

const {
  gw,
  sql,
  orgs: [{ key }, { key: otherKey }],
} = useGateway({ env: { VLLM_BASE_URL: undefined }, orgs: ['org', 'org'] });

beforeEach(() => {
  gw.openai.requests.length = 0;
  gw.anthropic.requests.length = 0;
});

const complete = (body: object, k = key) => call(gw.stack.app, k, 'POST', '/completion', body);
const traceLog = async (id: string, k = key) => readTrace(gw.stack.app, k, id);
const openaiConfig = (content = 'hello there', extra: object = {}) => ({
  model: 'gpt-4o-mini',
  provider: 'openai',
  messages: [userMessage(content)],
  ...extra,
});

describe('POST /completion', () => {
  it('answers every field of the completion response, with the request trace_id as trace_id and inference_id', async () => {
    const trace_id = randomUUID();
    const res = await complete({ trace_id, llm_configuration: openaiConfig('hello there'), project_name: 'gateway' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      content: 'echo: hello there',
      latency: expect.any(Number),
      input_tokens: 7,
      output_tokens: 3,
      total_tokens: 10,
      cost: expect.any(Number),
      model: 'gpt-4o-mini',
      provider: 'openai',
      cache_hit: false,
      status: 'success',
      start_timestamp: expect.any(String),
      end_timestamp: expect.any(String),
      trace_id,
      inference_id: trace_id,
      error: null,
    });
    expect(body.cost).toBeGreaterThan(0);
    expect(body.latency).toBeGreaterThan(0);
  });

  it('writes no start mark for a call from the completion queue: at a deadline the API reads its job state', async () => {
    const res = await complete({ llm_configuration: openaiConfig('unmarked') });
    expect(res.json().status).toBe('success');
    expect(await gw.stack.app.redis.keys(`${gw.stack.prefix}:completion-started:*`)).toEqual([]);
  });

  it('maps llm_configuration onto the provider request', async () => {
    await complete({
      llm_configuration: {
        model: 'gpt-4o-mini',
        provider: 'openai',
        model_params: {
          temp: 0.2,
          max_length: 50,
          top_p: 0.5,
          frequency_penalty: 0.1,
          presence_penalty: 0.3,
          response_format: { type: 'json_object' },
        },
        history: [
          { role: 'example_user', content: 'q1' },
          { role: 'example_assistant', content: 'a1' },
        ],
        messages: [{ role: 'system', content: 'sys' }, userMessage('Hi {{who}}')],
        functions: [
          {
            name: 'get_weather',
            description: 'weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        function_call: 'auto',
      },
      llm_inputs: { who: 'Grace' },
    });
    const sent = gw.openai.requests[0].body;
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0.2,
      max_tokens: 50,
      top_p: 0.5,
      frequency_penalty: 0.1,
      presence_penalty: 0.3,
      response_format: { type: 'json_object' },
      tool_choice: 'auto',
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
      messages: [
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'Hi Grace' },
      ],
    });
  });

  it("takes the providers' names for model parameters, and refuses one it does not know before any call", async () => {
    const config = (model_params: object) => ({ llm_configuration: openaiConfig('params', { model_params }) });
    const res = await complete(config({ temperature: 0.4, max_completion_tokens: 20, safe_prompt: null }));
    expect(res.json()).toMatchObject({ status: 'success' });
    expect(gw.openai.requests[0].body).toMatchObject({ temperature: 0.4, max_tokens: 20 });
    for (const [model_params, at] of [
      [{ temp: 0.4, seed: 7 }, 'seed'],
      [{ max_length: 20, max_tokens: 30 }, 'max_tokens'],
    ] as const) {
      const refused = await complete(config(model_params));
      expect(refused.statusCode, JSON.stringify(model_params)).toBe(422);
      expect(refused.json().detail).toEqual([
        { loc: ['body', 'llm_configuration', 'model_params', at], msg: expect.stringContaining(at), type: 'custom' },
      ]);
    }
    expect(gw.openai.requests).toHaveLength(1);
  });

  it('counts tokens with a tokenizer when the provider reports no usage', async () => {
    gw.openai.plan({ noUsage: true });
    const res = (await complete({ llm_configuration: openaiConfig('hello world') })).json();
    // o200k_base: "hello world" is 2 tokens, framed as 3 + 2 + 3; "echo: hello world" is 4 (echo, :, hello, world).
    expect(res).toMatchObject({ status: 'success', input_tokens: 8, output_tokens: 4, total_tokens: 12 });
    // Logged as counted, not reported.
    expect((await traceLog(res.trace_id)).json()).toMatchObject({ input_tokens: 8, usage_estimated: true });
  });

  it("refuses a provider's name longer than any provider's, and logs a call to any name it takes", async () => {
    // A call's log is named after its provider: a name of thousands of characters made a log that PostgreSQL
    // could not index, so a call answered 200 lost its log (found by the fuzz test).
    const refused = await complete({ llm_configuration: openaiConfig('long', { provider: 'p'.repeat(65) }) });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().detail).toEqual([
      { loc: ['body', 'llm_configuration', 'provider'], msg: expect.stringContaining('64'), type: 'too_big' },
    ]);
    // The longest name taken, of characters that do not compress: no such provider, and its log is stored.
    const provider = randomBytes(48).toString('base64');
    const answered = (await complete({ llm_configuration: openaiConfig('longest', { provider }) })).json();
    expect(answered).toMatchObject({ status: 'error', provider });
    await expect
      .poll(async () => (await traceLog(answered.trace_id)).json())
      .toMatchObject({ trace_name: `llm-${provider}` });
    expect(gw.openai.requests).toHaveLength(0);
  });

  it('answers 422 naming a missing template variable, and calls no provider', async () => {
    const res = await complete({ llm_configuration: openaiConfig('Hi {{who}} from {{where}}'), inputs: { who: 'x' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toEqual([
      { loc: ['body', 'inputs', 'where'], msg: "missing template variable 'where'", type: 'missing' },
    ]);
    expect(gw.openai.requests).toHaveLength(0);
  });

  it('speaks to Anthropic with the system prompt apart and usage from the provider', async () => {
    const res = await complete({
      llm_configuration: {
        model: 'claude-3-5-haiku-latest',
        provider: 'anthropic',
        model_params: { max_length: 100 },
        messages: [{ role: 'system', content: 'be kind' }, userMessage('hi')],
      },
    });
    expect(res.json()).toMatchObject({
      status: 'success',
      content: 'echo: hi',
      provider: 'anthropic',
      input_tokens: 14,
      output_tokens: 2,
    });
    expect(res.json().cost).toBeGreaterThan(0);
    expect(gw.anthropic.requests[0].body).toMatchObject({
      system: 'be kind',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    // The SDK sends the key as x-api-key or, in its newer releases, as a bearer token.
    const headers = gw.anthropic.requests[0].headers;
    expect(headers['x-api-key'] ?? headers.authorization?.replace(/^Bearer /, '')).toBe('sk-env-anthropic');
  });

  it('speaks to Azure OpenAI through a deployment URL', async () => {
    const azure = await startGatewayEnv({
      AZURE_OPENAI_BASE_URL: `${gw.openai.baseURL.replace('/v1', '')}/openai/deployments/my-gpt`,
      AZURE_OPENAI_API_KEY: 'az-key',
    });
    const res = await call(azure.stack.app, key, 'POST', '/completion', {
      llm_configuration: { model: 'gpt-4o', provider: 'azure', messages: [userMessage('hi azure')] },
    });
    expect(res.json()).toMatchObject({ status: 'success', content: 'echo: hi azure', provider: 'azure' });
    const sent = gw.openai.requests.at(-1)!;
    expect(sent.path).toMatch(/^\/openai\/deployments\/my-gpt\/chat\/completions\?api-version=/);
    expect(sent.headers['api-key']).toBe('az-key');
    await azure.stack.close();
  });

  it('speaks to any OpenAI-compatible server given a base URL, and flags a model with no known price', async () => {
    const compatible = await startGatewayEnv({ VLLM_BASE_URL: gw.openai.baseURL });
    const res = await call(compatible.stack.app, key, 'POST', '/completion', {
      llm_configuration: { model: 'my-finetune', provider: 'vllm', messages: [userMessage('local')] },
    });
    expect(res.json()).toMatchObject({ status: 'success', content: 'echo: local', provider: 'vllm', cost: 0 });
    const logged = (await readTrace(compatible.stack.app, key, res.json().trace_id)).json();
    expect(logged.metadata).toEqual({ price_unknown: true });
    expect(logged.cost).toBe(0);
    await compatible.stack.close();
  });

  it('logs the completion as a trace log with its configuration, inputs, output, tokens and cost', async () => {
    const res = await complete({
      llm_configuration: openaiConfig('Say {{word}}', { model_params: { temp: 0.7 } }),
      inputs: { word: 'cheese' },
      project_name: 'logged',
      metadata: { team: 'a' },
      tags: ['t'],
      target: 'cheese',
      end_user_identifier: 'user-1',
      name: 'my-call',
    });
    const body = res.json();
    const log = (await traceLog(body.trace_id)).json();
    expect(log).toMatchObject({
      trace_id: body.trace_id,
      trace_name: 'my-call',
      project_name: 'logged',
      status: 'success',
      inputs: { word: 'cheese' },
      output: 'echo: Say cheese',
      input_tokens: body.input_tokens,
      output_tokens: body.output_tokens,
      total_tokens: body.total_tokens,
      cost: body.cost,
      cache_hit: false,
      metadata: { team: 'a' },
      tags: ['t'],
      target: 'cheese',
      end_user_identifier: 'user-1',
      configuration: {
        model: 'gpt-4o-mini',
        provider: 'openai',
        model_params: { temperature: 0.7 },
        messages: [{ role: 'user', content: 'Say cheese' }],
      },
    });
    expect(log.latency).toBeCloseTo(body.latency, 6);
    const plain = (await traceLog((await complete({ llm_configuration: openaiConfig() })).json().trace_id)).json();
    expect(plain.trace_name).toBe('llm-openai');
  });

  it('takes the trace id from inference_id and the log name from trace_name, and logs experiment_uuid', async () => {
    const inference_id = randomUUID(),
      experiment_uuid = randomUUID();
    const res = (
      await complete({ inference_id, trace_name: 'named', experiment_uuid, llm_configuration: openaiConfig() })
    ).json();
    expect(res).toMatchObject({ trace_id: inference_id, inference_id });
    expect((await traceLog(inference_id)).json()).toMatchObject({ trace_name: 'named', experiment_uuid });
  });

  it('keeps inputs and outputs out of the stored log when asked', async () => {
    const omitAll = (
      await complete({ llm_configuration: openaiConfig('secret {{x}}'), inputs: { x: 'pii' }, log_omit: true })
    ).json();
    expect(omitAll.content).toBe('echo: secret pii');
    const log = (await traceLog(omitAll.trace_id)).json();
    expect(log).toMatchObject({
      inputs: null,
      output: null,
      configuration: { model: 'gpt-4o-mini', provider: 'openai' },
    });
    expect(JSON.stringify(log)).not.toContain('pii');
    const outputsOnly = (
      await traceLog(
        (await complete({ llm_configuration: openaiConfig('keep me'), log_omit_outputs: true })).json().trace_id,
      )
    ).json();
    expect(outputsOnly).toMatchObject({ output: null, configuration: { messages: [{ content: 'keep me' }] } });
    const withFunctions = openaiConfig('drop me', { model_params: { temp: 0.5 }, functions: [{ name: 'f' }] });
    const inputsOnly = (
      await traceLog(
        (await complete({ llm_configuration: withFunctions, inputs: { a: '1' }, log_omit_inputs: true })).json()
          .trace_id,
      )
    ).json();
    expect(inputsOnly).toMatchObject({ inputs: null, output: 'echo: drop me' });
    expect(inputsOnly.configuration).toEqual({ model: 'gpt-4o-mini', provider: 'openai' });
  });

  it('still answers, but logs nothing, when the log is sampled out', async () => {
    const res = await complete({ llm_configuration: openaiConfig(), log_sample_rate: 0 });
    expect(res.json().status).toBe('success');
    expect((await traceLog(res.json().trace_id)).statusCode).toBe(404);
  });

  it('nests a completion under its parent span', async () => {
    const parent = randomUUID();
    await call(gw.stack.app, key, 'POST', '/trace_log', {
      trace_id: parent,
      project_name: 'nested',
      trace_name: 'chain',
    });
    const res = await complete({
      llm_configuration: openaiConfig(),
      parent_trace_id: parent,
      root_trace_id: parent,
      project_name: 'nested',
    });
    const tree = (await traceLog(parent)).json();
    expect(tree.children_ids).toEqual([res.json().trace_id]);
    expect(tree.children[0]).toMatchObject({ trace_name: 'llm-openai', depth: 1 });
  });
});

describe('provider failures', () => {
  it('turns a provider 500 into status "error" with an error trace log', async () => {
    gw.openai.plan({ status: 500 }, 3);
    const res = await complete({ llm_configuration: openaiConfig() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/openai error \(HTTP 500\)/),
      content: '',
      cost: 0,
    });
    expect(gw.openai.requests).toHaveLength(3); // the first try and two retries
    const log = (await traceLog(res.json().trace_id)).json();
    expect(log).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
  });
  it('retries a 429 with backoff and succeeds', async () => {
    gw.openai.plan({ status: 429 });
    const res = await complete({ llm_configuration: openaiConfig('retry me') });
    expect(res.json()).toMatchObject({ status: 'success', content: 'echo: retry me' });
    expect(gw.openai.requests).toHaveLength(2);
  });
  it('does not retry a 400', async () => {
    gw.openai.plan({ status: 400 });
    const res = await complete({ llm_configuration: openaiConfig() });
    expect(res.json()).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 400') });
    expect(gw.openai.requests).toHaveLength(1);
  });
  it('gives up on a provider that hangs, within the time budget', async () => {
    gw.openai.plan({ hangMs: 3000 }, 3);
    const started = Date.now();
    const res = await complete({ llm_configuration: openaiConfig() });
    expect(res.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/timeout|timed out/i) });
    expect(Date.now() - started).toBeLessThan(3 * 1000 + 8000);
  });
  it('reports a refused connection as status "error"', async () => {
    const dead = await startGatewayEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', PROVIDER_MAX_RETRIES: '0' });
    const res = await call(dead.stack.app, key, 'POST', '/completion', { llm_configuration: openaiConfig() });
    expect(res.json()).toMatchObject({ status: 'error', error: expect.stringContaining('openai error') });
    await dead.stack.close();
  });
  it('says clearly when there is no key for the provider', async () => {
    const res = await complete({
      llm_configuration: { model: 'mistral-small-latest', provider: 'mistral', messages: [userMessage('x')] },
    });
    expect(res.json()).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/no API key for provider 'mistral'.*provider_api_key.*MISTRAL_API_KEY/),
    });
  });
});

describe('what a careless provider or request cannot do', () => {
  it('bounds a response body that stalls after its headers', async () => {
    // The worker's log, kept to explain an answer that does not come (seen only on a loaded CI machine).
    const workerLog: string[] = [];
    const strict = await startGatewayEnv(
      { PROVIDER_MAX_RETRIES: '0' },
      pino({ level: 'debug' }, { write: (line: string) => void workerLog.push(line) }),
    );
    gw.openai.plan({ stallAfterChunks: 0 });
    const started = Date.now();
    const answer = call(strict.stack.app, key, 'POST', '/completion', { llm_configuration: openaiConfig() });
    const late = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`no answer in 10 s; the worker's log:\n${workerLog.join('')}`)),
        10_000,
      ).unref(),
    );
    const res = await Promise.race([answer, late]);
    expect(res.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/timed out/) });
    expect(Date.now() - started).toBeLessThan(5000);
    await strict.stack.close();
  });
  it('counts text that looks like a special token when the provider reports no usage', async () => {
    gw.openai.plan({ noUsage: true });
    const res = (await complete({ llm_configuration: openaiConfig('say <|endoftext|> please') })).json();
    expect(res).toMatchObject({ status: 'success', content: 'echo: say <|endoftext|> please' });
    expect(res.output_tokens).toBeGreaterThan(3);
  });
  it('treats only the given inputs as template variables', async () => {
    const res = await complete({ llm_configuration: openaiConfig('{{constructor}} {{toString}}'), inputs: {} });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((d: { loc: string[] }) => d.loc[2])).toEqual(['constructor', 'toString']);
  });
  it('never sends a key for an OpenAI-compatible provider to OpenAI when it has no base URL', async () => {
    const before = gw.openai.requests.length;
    const res = await complete({
      llm_configuration: { model: 'llama3', provider: 'vllm', messages: [userMessage('x')] },
      provider_api_key: 'sk-private',
    });
    expect(res.json()).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/no base URL for provider 'vllm'/),
    });
    expect(gw.openai.requests.length).toBe(before);
    const proto = await complete({
      llm_configuration: { model: 'm', provider: '__proto__', messages: [userMessage('x')] },
    });
    expect(proto.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/unknown provider/) });
  });
  it('refuses a request provider key when the server cannot seal it', async () => {
    const plain = await startGatewayEnv({ SECRETS_KEY: undefined });
    const res = await call(plain.stack.app, key, 'POST', '/completion', {
      llm_configuration: openaiConfig(),
      provider_api_key: 'sk-live-secret',
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toMatch(/SECRETS_KEY/);
    await plain.stack.close();
  });
  it('never puts a request provider key in a job in the clear', async () => {
    gw.openai.plan({ status: 400 });
    await complete({ llm_configuration: openaiConfig('sealed'), provider_api_key: 'sk-live-never-plain' });
    const failed = await gw.stack.app.completionJobs.queue.getJobs(['failed', 'completed', 'waiting', 'active']);
    const raw = await gw.stack.app.redis.keys(`${gw.stack.prefix}:completion:*`);
    const dump = JSON.stringify(
      await Promise.all(
        raw.map((k) => gw.stack.app.redis.type(k).then((t) => (t === 'hash' ? gw.stack.app.redis.hgetall(k) : null))),
      ),
    );
    expect(dump + JSON.stringify(failed.map((j) => j.data))).not.toContain('sk-live-never-plain');
  });
});

describe('anthropic', () => {
  const claude = (content: string) => ({
    model: 'claude-3-5-haiku-latest',
    provider: 'anthropic',
    messages: [userMessage(content)],
    functions: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
  });
  it('returns a function call, streamed or not, as the JSON of the call', async () => {
    gw.anthropic.plan({ toolUse: true });
    const plain = (await complete({ llm_configuration: claude('weather?') })).json();
    expect(JSON.parse(plain.content)).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });
  it('counts cached prompt tokens and prices them at the cache rate', async () => {
    const cold = (await complete({ llm_configuration: claude('hi') })).json();
    gw.anthropic.plan({ cacheReadTokens: 5000 });
    const warm = (await complete({ llm_configuration: claude('hi') })).json();
    expect(warm.input_tokens).toBe(cold.input_tokens + 5000);
    const allUncached = calcPrice(
      { input_tokens: warm.input_tokens, output_tokens: warm.output_tokens },
      'claude-3-5-haiku-latest',
      { providerId: 'anthropic' },
    )!.total_price;
    expect(warm.cost).toBeGreaterThan(cold.cost);
    expect(warm.cost).toBeLessThan(allUncached);
  });
  it('turns an Anthropic 500 into status "error" after its retries', async () => {
    gw.anthropic.plan({ status: 500 }, 3);
    const res = (await complete({ llm_configuration: claude('fail') })).json();
    expect(res).toMatchObject({ status: 'error', error: expect.stringContaining('anthropic error (HTTP 500)') });
  });
});

describe('provider keys', () => {
  it('uses the request key first, then the saved key, then the environment', async () => {
    const org = await newOrganization(sql, 'keys');
    const auth = () => gw.openai.requests.at(-1)!.headers.authorization;
    await complete({ llm_configuration: openaiConfig() }, org.key);
    expect(auth()).toBe('Bearer sk-env-openai');
    expect(
      (await call(gw.stack.app, org.key, 'POST', '/provider-keys', { provider: 'openai', api_key: 'sk-saved-1234' }))
        .statusCode,
    ).toBe(200);
    await complete({ llm_configuration: openaiConfig('saved') }, org.key);
    expect(auth()).toBe('Bearer sk-saved-1234');
    await complete({ llm_configuration: openaiConfig('request'), provider_api_key: 'sk-request' }, org.key);
    expect(auth()).toBe('Bearer sk-request');
    // Another organization never uses this one's saved key.
    await complete({ llm_configuration: openaiConfig('other') }, otherKey);
    expect(auth()).toBe('Bearer sk-env-openai');
    // Workers cache saved keys: a key replaced or deleted a moment ago is honoured all the same.
    await call(gw.stack.app, org.key, 'POST', '/provider-keys', { provider: 'openai', api_key: 'sk-saved-5678' });
    await complete({ llm_configuration: openaiConfig('replaced') }, org.key);
    expect(auth()).toBe('Bearer sk-saved-5678');
    await call(gw.stack.app, org.key, 'DELETE', '/provider-keys/openai');
    await complete({ llm_configuration: openaiConfig('deleted') }, org.key);
    expect(auth()).toBe('Bearer sk-env-openai');
  });
  it('stores keys sealed, lists only their last 4 characters, and deletes them', async () => {
    const org = await newOrganization(sql, 'keys');
    await call(gw.stack.app, org.key, 'POST', '/provider-keys', {
      provider: 'anthropic',
      api_key: 'sk-ant-very-secret-9876',
    });
    const listed = (await call(gw.stack.app, org.key, 'GET', '/provider-keys')).json();
    expect(listed).toEqual([
      {
        provider: 'anthropic',
        api_key: '...9876',
        base_url: null,
        max_concurrent: null,
        rpm: null,
        tpm: null,
        updated_at: expect.any(String),
      },
    ]);
    const rows = await sql`select * from provider_keys where organization_id = ${org.id}`;
    expect(JSON.stringify(rows)).not.toContain('very-secret');
    expect((await call(gw.stack.app, otherKey, 'GET', '/provider-keys')).json()).toEqual([]);
    expect((await call(gw.stack.app, otherKey, 'DELETE', '/provider-keys/anthropic')).statusCode).toBe(404);
    expect((await call(gw.stack.app, org.key, 'DELETE', '/provider-keys/anthropic')).statusCode).toBe(200);
    expect((await call(gw.stack.app, org.key, 'GET', '/provider-keys')).json()).toEqual([]);
  });
  it("uses a saved key's base URL for an OpenAI-compatible provider", async () => {
    const org = await newOrganization(sql, 'keys');
    await call(gw.stack.app, org.key, 'POST', '/provider-keys', {
      provider: 'groq',
      api_key: 'gsk-abc',
      base_url: gw.openai.baseURL,
    });
    const res = await complete(
      { llm_configuration: { model: 'llama-3.1-8b-instant', provider: 'groq', messages: [userMessage('fast')] } },
      org.key,
    );
    expect(res.json()).toMatchObject({ status: 'success', content: 'echo: fast' });
    expect(gw.openai.requests.at(-1)!.headers.authorization).toBe('Bearer gsk-abc');
  });
  it('refuses to save keys when the server has no SECRETS_KEY', async () => {
    const plain = await startGatewayEnv({ SECRETS_KEY: undefined });
    const res = await call(plain.stack.app, key, 'POST', '/provider-keys', { provider: 'openai', api_key: 'sk-x' });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toMatch(/SECRETS_KEY/);
    await plain.stack.close();
  });
});

describe('cache', () => {
  it('answers an identical cached request from Redis without calling the provider, at no cost', async () => {
    const body = { llm_configuration: openaiConfig(`cache ${randomUUID()}`), cache: true };
    const first = (await complete(body)).json();
    expect(first.cache_hit).toBe(false);
    const second = (await complete(body)).json();
    expect(second).toMatchObject({
      cache_hit: true,
      cost: 0,
      content: first.content,
      input_tokens: first.input_tokens,
      status: 'success',
    });
    expect(gw.openai.requests).toHaveLength(1);
    expect((await traceLog(second.trace_id)).json()).toMatchObject({ cache_hit: true, cost: 0 });
    // Another organization has its own cache.
    await complete(body, otherKey);
    expect(gw.openai.requests).toHaveLength(2);
  });
  it('keeps a cached completion for COMPLETION_CACHE_TTL_SECONDS', async () => {
    const ttl = await startGatewayEnv({ COMPLETION_CACHE_TTL_SECONDS: '120' });
    await call(ttl.stack.app, key, 'POST', '/completion', {
      llm_configuration: openaiConfig(`ttl ${randomUUID()}`),
      cache: true,
    });
    const [cacheKey] = await ttl.stack.app.redis.keys(`${ttl.stack.prefix}:completion-cache:*`);
    const remaining = await ttl.stack.app.redis.ttl(cacheKey);
    expect(remaining).toBeGreaterThan(100);
    expect(remaining).toBeLessThanOrEqual(120);
    await ttl.stack.close();
  });

  it('keys the cache on functions too', async () => {
    const config = openaiConfig(`fn ${randomUUID()}`);
    await complete({ llm_configuration: config, cache: true });
    await complete({ llm_configuration: { ...config, functions: [{ name: 'lookup' }] }, cache: true });
    expect(gw.openai.requests).toHaveLength(2);
  });

  it('does not read the cache without cache: true, and keys on params', async () => {
    const config = openaiConfig(`nocache ${randomUUID()}`);
    await complete({ llm_configuration: config, cache: true });
    await complete({ llm_configuration: config });
    await complete({ llm_configuration: { ...config, model_params: { temp: 1 } }, cache: true });
    expect(gw.openai.requests).toHaveLength(3);
  });
});

async function startGatewayEnv(env: Record<string, string | undefined>, workerLog?: Logger) {
  const { buildStack } = await import('../support/app');
  const stack = await buildStack({
    workerLog,
    env: {
      OPENAI_BASE_URL: gw.openai.baseURL,
      OPENAI_API_KEY: 'sk-env-openai',
      ANTHROPIC_BASE_URL: gw.anthropic.baseURL,
      SECRETS_KEY: gw.secretsKey,
      COMPLETION_TIMEOUT_MS: '1000',
      ...env,
    },
  });
  return { stack };
}
