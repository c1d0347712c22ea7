import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';

const {
  gw,
  orgs: [{ key }, { key: otherKey }],
} = useGateway({ orgs: ['org', 'org'] });

beforeEach(() => {
  gw.openai.requests.length = 0;
  gw.anthropic.requests.length = 0;
});

const api = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: object, k = key) =>
  call(gw.stack.app, k, method, path, body);
const openai = { provider: 'openai', model: 'gpt-4o-mini' };
const anthropic = { provider: 'anthropic', model: 'claude-3-5-haiku-20241022' };
const saveRoute = async (route: object) => {
  const res = await api('POST', '/routes', route);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const complete = (route: string, content = 'hello there', trace_id = randomUUID()) =>
  api('POST', '/completion', {
    trace_id,
    llm_configuration: { model: `route:${route}`, messages: [userMessage(content)] },
  });
type Span = { trace_name: string; status: string; error: string | null; configuration: any; metadata: any };
const traceOf = async (id: string) => (await readTrace(gw.stack.app, key, id)).json() as Span & { children: Span[] };

describe('routes', () => {
  it('saves, replaces, lists and deletes named routes, each organization its own', async () => {
    const saved = await saveRoute({ name: 'chat', strategy: 'fallback', targets: [openai, anthropic] });
    expect(saved).toEqual({
      name: 'chat',
      strategy: 'fallback',
      targets: [openai, anthropic],
      retry_on: ['429', '5xx', 'timeout'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    await saveRoute({
      name: 'chat',
      strategy: 'loadbalance',
      targets: [{ ...openai, weight: 3 }, anthropic],
      retry_on: [429],
    });
    expect((await api('GET', '/routes')).json()).toEqual([
      expect.objectContaining({ name: 'chat', strategy: 'loadbalance', retry_on: ['429'] }),
    ]);
    expect((await api('GET', '/routes', undefined, otherKey)).json()).toEqual([]);
    expect((await api('DELETE', '/routes/chat', undefined, otherKey)).statusCode).toBe(404);
    expect((await api('DELETE', '/routes/chat')).json()).toEqual({ name: 'chat', deleted: true });
    expect((await api('DELETE', '/routes/chat')).statusCode).toBe(404);
  });

  it('refuses a malformed route with 422, naming the field', async () => {
    const refused = async (route: object, loc: (string | number)[]) => {
      const res = await api('POST', '/routes', route);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(['body', ...loc]);
    };
    await refused({ name: 'r', strategy: 'random', targets: [openai] }, ['strategy']);
    await refused({ name: 'r', strategy: 'fallback', targets: [] }, ['targets']);
    await refused({ name: 'r', strategy: 'fallback', targets: [{ ...openai, weight: -1 }] }, ['targets', 0, 'weight']);
    await refused({ name: 'r', strategy: 'fallback', targets: [openai], retry_on: [500] }, ['retry_on', 0]);
    await refused({ name: 'a route', strategy: 'fallback', targets: [openai] }, ['name']);
  });

  it('answers a completion naming an unknown route with 422 and calls no provider', async () => {
    const res = await complete('nowhere');
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'llm_configuration', 'model'] });
    expect(gw.openai.requests).toHaveLength(0);
  });

  it('falls back to the next target on a 5xx: the answer names the target that answered, and the trace log every attempt', async () => {
    await saveRoute({ name: 'fallback', strategy: 'fallback', targets: [openai, anthropic] });
    gw.openai.plan({ status: 500 });
    const trace_id = randomUUID();
    const res = await complete('fallback', 'hello there', trace_id);
    expect(res.json()).toMatchObject({
      status: 'success',
      content: 'echo: hello there',
      provider: 'anthropic',
      model: anthropic.model,
      error: null,
    });
    // One call each: the route moves on instead of the SDK retrying the failing target.
    expect(gw.openai.requests).toHaveLength(1);
    expect(gw.anthropic.requests).toHaveLength(1);
    const trace = await traceOf(trace_id);
    expect(trace).toMatchObject({
      status: 'success',
      configuration: { provider: 'anthropic', model: anthropic.model },
    });
    expect(trace.children).toEqual([
      expect.objectContaining({
        trace_name: `attempt openai/${openai.model}`,
        status: 'error',
        error: expect.stringContaining('500'),
        configuration: { provider: 'openai', model: openai.model },
        metadata: expect.objectContaining({ route: 'fallback', failure: '5xx' }),
      }),
    ]);
  });

  it('moves on only on the failures it lists, and not on a request the provider refuses', async () => {
    await saveRoute({ name: 'on-429', strategy: 'fallback', targets: [openai, anthropic], retry_on: ['429'] });
    gw.openai.plan({ status: 500 });
    expect((await complete('on-429')).json()).toMatchObject({ status: 'error', provider: 'openai' });
    gw.openai.plan({ status: 429 });
    expect((await complete('on-429')).json()).toMatchObject({ status: 'success', provider: 'anthropic' });
    await saveRoute({ name: 'all', strategy: 'fallback', targets: [openai, anthropic] });
    gw.openai.plan({ status: 400 });
    expect((await complete('all')).json()).toMatchObject({ status: 'error', provider: 'openai' });
    expect(gw.anthropic.requests).toHaveLength(1);
  });

  it('answers an error naming every target when all of them fail, each attempt in the trace log', async () => {
    await saveRoute({ name: 'doomed', strategy: 'fallback', targets: [openai, anthropic] });
    gw.openai.plan({ status: 503 });
    // The last target keeps the server's retries (PROVIDER_MAX_RETRIES=2 here): it fails three times. (Had
    // it refused for overload, the job would wait in its lane and call it again, as a call without a route.)
    gw.anthropic.plan({ status: 500 }, 3);
    const trace_id = randomUUID();
    const body = (await complete('doomed', 'hi', trace_id)).json();
    expect(body.status).toBe('error');
    expect(body.error).toMatch(
      /^no target answered \(tried 2 of 2\): openai\/gpt-4o-mini: .*503.*; anthropic\/claude-3-5-haiku-20241022: .*500/,
    );
    expect(gw.openai.requests).toHaveLength(1);
    expect(gw.anthropic.requests).toHaveLength(3);
    const trace = await traceOf(trace_id);
    expect(trace.status).toBe('error');
    expect(trace.children.map((c) => c.configuration.provider).sort()).toEqual(['anthropic', 'openai']);
  });

  it('load-balances by weight, passing over a target that failed a moment ago', async () => {
    // OpenAI's weight makes it first on every draw unless it is cooling down.
    await saveRoute({ name: 'lb', strategy: 'loadbalance', targets: [{ ...openai, weight: 1e6 }, anthropic] });
    for (let i = 0; i < 3; i++) expect((await complete('lb')).json()).toMatchObject({ provider: 'openai' });
    expect(gw.anthropic.requests).toHaveLength(0);
    gw.openai.plan({ status: 502 });
    expect((await complete('lb')).json()).toMatchObject({ status: 'success', provider: 'anthropic' });
    // Cooling down: drawn after the others, so Anthropic answers without OpenAI being tried.
    const before = gw.openai.requests.length;
    expect((await complete('lb')).json()).toMatchObject({ status: 'success', provider: 'anthropic' });
    expect(gw.openai.requests).toHaveLength(before);
  });

  it('uses the saved key a target names, with its base URL', async () => {
    await api('POST', '/provider-keys', {
      provider: 'openai-backup',
      api_key: 'sk-backup-9876',
      base_url: gw.openai.baseURL,
    });
    await saveRoute({
      name: 'keyed',
      strategy: 'fallback',
      targets: [anthropic, { ...openai, provider_key: 'openai-backup' }],
    });
    gw.anthropic.plan({ status: 500 });
    expect((await complete('keyed')).json()).toMatchObject({ status: 'success', provider: 'openai' });
    expect(gw.openai.requests.at(-1)!.headers.authorization).toBe('Bearer sk-backup-9876');
  });

  it('refuses a target naming a key never saved, and never uses the server’s key for one deleted since', async () => {
    const res = await api('POST', '/routes', {
      name: 'unkeyed',
      strategy: 'fallback',
      targets: [openai, { ...openai, provider_key: 'never-saved' }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({ loc: ['body', 'targets', 1, 'provider_key'] });
    await api('POST', '/provider-keys', {
      provider: 'soon-gone',
      api_key: 'sk-gone-1111',
      base_url: gw.openai.baseURL,
    });
    await saveRoute({ name: 'gone', strategy: 'fallback', targets: [{ ...openai, provider_key: 'soon-gone' }] });
    await api('DELETE', '/provider-keys/soon-gone');
    expect((await complete('gone')).json()).toMatchObject({
      status: 'error',
      error: expect.stringContaining("no saved provider key 'soon-gone'"),
    });
    expect(gw.openai.requests).toHaveLength(0);
  });
  it('is followed from a deployed prompt whose version names it as the model', async () => {
    await saveRoute({ name: 'deployed', strategy: 'fallback', targets: [openai, anthropic] });
    // A version names a provider; a route's targets name their own, so it is not used.
    const created = await api('POST', '/prompts', {
      name: 'routed-bot',
      model: 'route:deployed',
      provider: 'openai',
      messages: [userMessage('Question: {{question}}')],
    });
    expect(created.statusCode).toBe(200);
    const deployment = (await api('POST', '/deployments', { prompt_version_id: created.json().id })).json();
    gw.openai.plan({ status: 500 });
    const res = await api('POST', '/completion', {
      deployment_id: deployment.deployment_id,
      inputs: { question: 'why?' },
    });
    expect(res.json()).toMatchObject({ status: 'success', provider: 'anthropic', content: 'echo: Question: why?' });
  });
});
