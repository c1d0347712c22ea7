import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildStack, call, readTrace, type TestStack } from '../support/app';
import { useSql } from '../support/fixtures';
import { startGateway, userMessage, type Gateway } from '../support/gateway';
import { startScript } from '../support/processes';
import { databaseUrl, newOrganization, redisUrl } from '../support/services';

// Provider limits and overloads: each rule against the fake providers, real HTTP servers that refuse with
// 429 / 503 / 529 (with and without Retry-After) or admit only so many requests at once.

const { sql } = useSql();

/** A gateway for one describe block, with its own environment (limits, time budget). */
function useLimitedGateway(env: Record<string, string>) {
  const handle = { gw: null as unknown as Gateway, key: '' };
  beforeAll(async () => {
    handle.gw = await startGateway(env);
    handle.key = (await newOrganization(sql, 'limits')).key;
  });
  afterAll(async () => handle.gw?.close());
  beforeEach(() => {
    for (const fake of [handle.gw.openai, handle.gw.anthropic]) {
      fake.requests.length = 0;
      fake.maxInFlight = 0;
      fake.refused = 0;
      fake.admit = null;
      fake.responseDelayMs = 0;
    }
  });
  return handle;
}

const openai = (content = 'hello', extra: object = {}) => ({
  llm_configuration: { provider: 'openai', model: 'gpt-4o-mini', messages: [userMessage(content)], ...extra },
});
const anthropic = (content = 'hello') => ({
  llm_configuration: { provider: 'anthropic', model: 'claude-3-5-haiku-20241022', messages: [userMessage(content)] },
});

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await run();
  return { value, ms: Date.now() - t0 };
}

describe('a provider that refuses for overload', () => {
  const h = useLimitedGateway({ COMPLETION_TIMEOUT_MS: '5000', PROVIDER_MAX_RETRIES: '0' });
  const complete = (body: object) => call(h.gw.stack.app, h.key, 'POST', '/completion', body);

  it("waits out a 429's Retry-After, with every call to that provider paused, and answers", async () => {
    h.gw.openai.plan({ status: 429, retryAfter: '1' });
    const first = timed(() => complete(openai('first')));
    // Once the refusal has marked the lane hot, its pause follows in the same step: a fixed sleep here
    // raced the refusal on a busy machine.
    const { redis, keys } = h.gw.stack.app;
    while ((await redis.zcard(keys.lanesHot)) === 0) await sleep(20);
    await sleep(100);
    const second = timed(() => complete(openai('second')));
    const [a, b] = await Promise.all([first, second]);
    expect(a.value.json()).toMatchObject({ status: 'success', content: 'echo: first' });
    expect(b.value.json()).toMatchObject({ status: 'success', content: 'echo: second' });
    expect(a.ms).toBeGreaterThanOrEqual(1000);
    const [refusal, ...after] = h.gw.openai.requests;
    expect(after).toHaveLength(2); // each called once more, none before the pause ended
    for (const r of after) expect(r.at - refusal.at).toBeGreaterThanOrEqual(950);
  });

  it("backs off when a 503 gives no Retry-After, and takes Anthropic's 529 with retry-after-ms", async () => {
    h.gw.openai.plan({ status: 503 });
    const a = await timed(() => complete(openai('again')));
    expect(a.value.json()).toMatchObject({ status: 'success', content: 'echo: again' });
    expect(a.ms).toBeGreaterThanOrEqual(900);
    expect(h.gw.openai.requests).toHaveLength(2);

    h.gw.anthropic.plan({ status: 529, retryAfterMs: '300' });
    const b = await timed(() => complete(anthropic('overloaded')));
    expect(b.value.json()).toMatchObject({ status: 'success', content: 'echo: overloaded' });
    expect(b.ms).toBeGreaterThanOrEqual(280);
    expect(h.gw.anthropic.requests).toHaveLength(2);
  });

  it('streams a call refused before its first chunk once, from the call that went', async () => {
    h.gw.openai.plan({ status: 429, retryAfterMs: '200' });
    const res = await h.gw.stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/completion/stream',
      headers: { authorization: `Bearer ${h.key}` },
      payload: openai('one two three'),
    });
    const events = res.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)));
    expect(events.map((e) => e.chunk).join('')).toBe('echo: one two three');
    expect(events.at(-1)).toMatchObject({ status: 'success' });
    expect(h.gw.openai.requests).toHaveLength(2);
  });

  it('never calls again after output: a stream that breaks part-way ends with an error', async () => {
    h.gw.openai.plan({ breakAfterChunks: 2 });
    const res = await h.gw.stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/completion/stream',
      headers: { authorization: `Bearer ${h.key}` },
      payload: openai('a b c d e f'),
    });
    const last = JSON.parse(res.body.trim().split('\n\n').at(-1)!.slice(6));
    expect(last).toMatchObject({ status: 'error' });
    expect(h.gw.openai.requests).toHaveLength(1);
  });

  it('counts the refusals and the waiting on /metrics, per provider', async () => {
    h.gw.openai.plan({ status: 429, retryAfterMs: '100' });
    expect((await complete(openai())).json()).toMatchObject({ status: 'success' });
    const text = (await h.gw.stack.app.inject({ url: '/metrics' })).body;
    expect(text).toMatch(/sightline_provider_overloads_total\{provider="openai",status="429"\} [1-9]/);
    expect(text).toMatch(/sightline_provider_limit_wait_seconds_total\{provider="openai"\} [0-9.e-]+/);
    expect(text).toMatch(/sightline_provider_calls_in_flight\{provider="openai"\} 0/);
  });
});

describe("a caller's time budget", () => {
  // PROVIDER_MAX_RETRIES=0: the budget is COMPLETION_TIMEOUT_MS for the whole request.
  const h = useLimitedGateway({ COMPLETION_TIMEOUT_MS: '1500', PROVIDER_MAX_RETRIES: '0', OPENAI_RPM: '2' });
  const complete = (body: object) => call(h.gw.stack.app, h.key, 'POST', '/completion', body);

  it("answers status error with the provider's message once no retry fits in it", async () => {
    h.gw.anthropic.plan({ status: 429, retryAfter: '1' }, 2);
    const { value, ms } = await timed(() => complete(anthropic()));
    expect(value.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/HTTP 429/) });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(3000);
    expect(h.gw.anthropic.requests).toHaveLength(2);
  });

  it('never starts a job whose caller stopped waiting: one queued behind a pause longer than its budget', async () => {
    await sleep(1000); // the last test's pause (1 s) is over
    h.gw.anthropic.plan({ status: 429, retryAfter: '2' });
    const first = timed(() => complete(anthropic('refused')));
    await sleep(150);
    const second = timed(() => complete(anthropic('queued behind the pause')));
    const [a, b] = await Promise.all([first, second]);
    // No retry fits in 1.5 s: the first caller hears the refusal at once; the provider's pause holds.
    expect(a.value.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/HTTP 429/) });
    expect(a.ms).toBeLessThan(1000);
    expect(b.value.json()).toMatchObject({
      status: 'error',
      error: "not called: this request's time budget ran out while it waited for anthropic's limit",
    });
    expect(b.ms).toBeGreaterThanOrEqual(1400);
    expect(b.ms).toBeLessThan(3500);
    await sleep(1500); // the pause is over: the queued job is taken, and dropped
    expect(h.gw.anthropic.requests.map((r) => r.body.messages[0].content)).toEqual(['refused']);
  });

  it('keeps to requests a minute, answers a caller still waiting at its deadline, and never runs its job', async () => {
    const results = await Promise.all([1, 2, 3].map((i) => timed(() => complete(openai(`m${i}`)))));
    const waited = results.find((r) => r.value.json().status === 'error')!;
    expect(results.filter((r) => r.value.json().status === 'success')).toHaveLength(2);
    expect(waited.value.json()).toMatchObject({
      error: "not called: this request's time budget ran out while it waited for openai's limit",
      content: '',
      cost: 0,
    });
    expect(waited.ms).toBeGreaterThanOrEqual(1400);
    expect(waited.ms).toBeLessThan(3500); // the deadline (1.5 s) and the grace for a worker's own answer (1 s)
    await sleep(1000);
    expect(h.gw.openai.requests).toHaveLength(2);
  });
});

describe('a routed completion that waited before it started', () => {
  const h = useLimitedGateway({ COMPLETION_TIMEOUT_MS: '3000', PROVIDER_MAX_RETRIES: '0' });
  const api = (method: 'POST', path: string, body: object) => call(h.gw.stack.app, h.key, method, path, body);

  it("gives its targets only what is left of its caller's budget, and answers itself at the deadline", async () => {
    const route = {
      name: 'slow',
      strategy: 'fallback',
      targets: [{ provider: 'anthropic', model: 'claude-3-5-haiku-20241022' }],
    };
    expect((await api('POST', '/routes', route)).statusCode).toBe(200);
    h.gw.anthropic.plan({ hangMs: 10_000 });
    await h.gw.stack.stopWorker();
    try {
      const pending = timed(() =>
        api('POST', '/completion', { llm_configuration: { model: 'route:slow', messages: [userMessage('hi')] } }),
      );
      await sleep(1500); // half of the 3 s budget goes by in the queue
      await h.gw.stack.startWorker();
      const { value, ms } = await pending;
      // The worker's own answer (its call cut at the deadline), not the API's after its grace (4 s).
      expect(value.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/timed out/) });
      expect(ms).toBeLessThan(3800);
      expect(h.gw.anthropic.requests).toHaveLength(1);
    } finally {
      await h.gw.stack.startWorker().catch(() => {});
    }
  });
});

describe("a route's targets", () => {
  const h = useLimitedGateway({ COMPLETION_TIMEOUT_MS: '5000', PROVIDER_MAX_RETRIES: '0', OPENAI_MAX_CONCURRENT: '1' });
  const api = (method: 'POST', path: string, body: object) => call(h.gw.stack.app, h.key, method, path, body);
  const viaRoute = (name: string, trace_id = randomUUID()) =>
    api('POST', '/completion', {
      trace_id,
      llm_configuration: { model: `route:${name}`, messages: [userMessage('hi')] },
    });
  const saveRoute = async (name: string, targets: object[]) =>
    expect((await api('POST', '/routes', { name, strategy: 'fallback', targets })).statusCode).toBe(200);
  const gpt = { provider: 'openai', model: 'gpt-4o-mini' };
  const claude = { provider: 'anthropic', model: 'claude-3-5-haiku-20241022' };

  it("keep to their lanes' limits: a route resumes in its target's lane, its failed attempts still logged", async () => {
    await saveRoute('to-limited', [claude, gpt]);
    h.gw.anthropic.plan({ status: 500 }, 4);
    h.gw.openai.responseDelayMs = 100;
    h.gw.openai.admit = { concurrent: 1, retryAfter: '1' };
    const ids = [1, 2, 3, 4].map(() => randomUUID());
    const answers = await Promise.all(ids.map((id) => viaRoute('to-limited', id)));
    for (const res of answers) expect(res.json()).toMatchObject({ status: 'success', provider: 'openai' });
    expect(h.gw.openai.maxInFlight).toBe(1);
    expect(h.gw.openai.refused).toBe(0);
    // Each failed target was called once: the route went on from where it stopped, not from the start.
    expect(h.gw.anthropic.requests).toHaveLength(4);
    for (const id of ids) {
      const trace = (await readTrace(h.gw.stack.app, h.key, id)).json();
      expect(trace.configuration).toMatchObject({ provider: 'openai' });
      expect(trace.children).toEqual([
        expect.objectContaining({ status: 'error', configuration: { provider: 'anthropic', model: claude.model } }),
      ]);
    }
  });

  it('pause their provider for every call when it refuses one for overload, as the route moves on', async () => {
    await saveRoute('from-overloaded', [claude, gpt]);
    h.gw.anthropic.plan({ status: 429, retryAfter: '1' });
    const routed = await timed(() => viaRoute('from-overloaded'));
    expect(routed.value.json()).toMatchObject({ status: 'success', provider: 'openai' });
    expect(routed.ms).toBeLessThan(900);
    // Anthropic asked for a second: a call straight to it waits that out too.
    const direct = await timed(() => api('POST', '/completion', anthropic('after')));
    expect(direct.value.json()).toMatchObject({ status: 'success', content: 'echo: after' });
    const [refusal, after] = h.gw.anthropic.requests;
    expect(after.at - refusal.at).toBeGreaterThanOrEqual(950);
  });

  it('call a later target on the same lane only once that lane admits it again', async () => {
    await saveRoute('one-lane', [gpt, { ...gpt, model: 'gpt-4o' }]);
    h.gw.openai.plan({ status: 429, retryAfter: '1' });
    const res = await viaRoute('one-lane');
    expect(res.json()).toMatchObject({ status: 'success', provider: 'openai', model: 'gpt-4o' });
    // The refusal paused the lane for a second: its second target, on the same account, waited it out.
    const [refused, answered] = h.gw.openai.requests;
    expect(refused.body.model).toBe('gpt-4o-mini');
    expect(answered.body.model).toBe('gpt-4o');
    expect(answered.at - refused.at).toBeGreaterThanOrEqual(950);
  });

  it('stream from the lane a route resumed in, once, after a target that failed before its first chunk', async () => {
    await saveRoute('streamed', [claude, gpt]);
    h.gw.anthropic.plan({ status: 500 });
    const res = await h.gw.stack.app.inject({
      method: 'POST',
      url: '/api/svc/v1/completion/stream',
      headers: { authorization: `Bearer ${h.key}` },
      payload: { llm_configuration: { model: 'route:streamed', messages: [userMessage('one two three')] } },
    });
    const events = res.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)));
    expect(events.map((e) => e.chunk).join('')).toBe('echo: one two three');
    expect(events.at(-1)).toMatchObject({ status: 'success', provider: 'openai' });
    expect(h.gw.anthropic.requests).toHaveLength(1);
    expect(h.gw.openai.requests).toHaveLength(1);
  });

  // OpenAI's lane (one call at a time) is held past the route's deadline by a call with a longer budget,
  // sent through an API node of its own (COMPLETION_TIMEOUT_MS 12 s) onto the same queues. Built ahead:
  // on a loaded machine, building it inside the test took the test past its time limit, and the call it
  // then sent held the lane into the next test.
  let longer: TestStack;
  beforeAll(async () => {
    longer = await buildStack({
      worker: false,
      env: { QUEUE_PREFIX: h.gw.stack.prefix, COMPLETION_TIMEOUT_MS: '12000', PROVIDER_MAX_RETRIES: '0' },
    });
  });
  afterAll(async () => longer?.close());

  it('answer at the deadline a route whose first target was called and whose next one waits in its lane', async () => {
    await saveRoute('started-then-waits', [claude, gpt]);
    h.gw.openai.plan({ stallAfterChunks: 0 });
    const holder = call(longer.app, h.key, 'POST', '/completion', openai('holds the lane'));
    await expect.poll(() => h.gw.openai.requests.length, { timeout: 5000 }).toBe(1);
    // Anthropic is called (the call started) and fails; the route then waits in OpenAI's lane.
    h.gw.anthropic.plan({ status: 500 });
    const routed = await timed(() => viaRoute('started-then-waits'));
    expect(routed.value.json()).toMatchObject({ status: 'error' });
    expect(h.gw.anthropic.requests).toHaveLength(1);
    // At the 5 s deadline and its grace, not when the lane frees (12 s) or at the API's last resort.
    expect(routed.ms).toBeLessThan(9000);
    // The holder's stalled call is cut at its own deadline, which frees the lane.
    expect((await holder).json()).toMatchObject({ status: 'error', error: expect.stringMatching(/timed out/) });
    await expect.poll(() => h.gw.openai.inFlight, { timeout: 5000 }).toBe(0);
  }, 45_000);

  // Last: it leaves OpenAI's lane paused past this block's time budget.
  it('answer a route that can wait no longer as one that tried its targets in turn', async () => {
    await saveRoute('out-of-time', [claude, gpt]);
    h.gw.anthropic.plan({ status: 500 });
    h.gw.openai.plan({ status: 429, retryAfter: '6' }); // more than the 5 s budget
    const trace_id = randomUUID();
    const res = await viaRoute('out-of-time', trace_id);
    expect(res.json()).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^no target answered \(tried 2 of 2\): anthropic\/.*500.*; openai\/.*429/),
    });
    const trace = (await readTrace(h.gw.stack.app, h.key, trace_id)).json();
    expect(trace.children.map((c: { configuration: { provider: string } }) => c.configuration.provider).sort()).toEqual(
      ['anthropic', 'openai'],
    );
  });
});

describe("an LLM judge's calls", () => {
  const h = useLimitedGateway({ COMPLETION_TIMEOUT_MS: '5000', PROVIDER_MAX_RETRIES: '0', OPENAI_MAX_CONCURRENT: '1' });
  const api = (method: 'POST', path: string, body: object) => call(h.gw.stack.app, h.key, method, path, body);

  it("keep to their provider's limits, as completions do", async () => {
    const judge = {
      name: 'limited-judge',
      type: 'llm_judge',
      config: { provider: 'openai', model: 'gpt-4o-mini', prompt_template: '{"score": 1, "reason": "{{output}}"}' },
    };
    expect((await api('POST', '/eval-metrics', judge)).statusCode).toBe(200);
    h.gw.openai.responseDelayMs = 100;
    h.gw.openai.admit = { concurrent: 1, retryAfter: '1' };
    const ids = [1, 2, 3, 4].map(() => randomUUID());
    // Outputs that differ, so that no judge's answer comes from the cache.
    const spans = ids.map((trace_id, i) => ({
      trace_id,
      project_name: 'judged',
      output: `o${i}`,
      evaluation_metric_names: ['limited-judge'],
    }));
    expect((await api('POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
    for (const [i, id] of ids.entries())
      await expect
        .poll(async () => (await readTrace(h.gw.stack.app, h.key, id)).json().scores, { timeout: 10_000 })
        .toEqual([{ name: 'limited-judge', score: 1, reason: `o${i}` }]);
    expect(h.gw.openai.requests).toHaveLength(4);
    expect(h.gw.openai.maxInFlight).toBe(1);
    expect(h.gw.openai.refused).toBe(0);
  });
});

describe('configured limits', () => {
  const h = useLimitedGateway({
    COMPLETION_TIMEOUT_MS: '3000',
    PROVIDER_MAX_RETRIES: '0',
    COMPLETION_CONCURRENCY: '2',
    OPENAI_MAX_CONCURRENT: '2',
  });
  const api = (method: 'GET' | 'POST', path: string, body?: object) => call(h.gw.stack.app, h.key, method, path, body);

  it('keeps to a concurrency limit with no 429, while waiting calls hold no worker slot', async () => {
    h.gw.openai.responseDelayMs = 300;
    h.gw.openai.admit = { concurrent: 2, retryAfter: '1' };
    const calls = Array.from({ length: 6 }, (_, i) => api('POST', '/completion', openai(`n${i}`)));
    // The calls beyond the limit wait in their lane, where /metrics counts them (once the worker moved them).
    const scrape = async () => (await h.gw.stack.app.inject({ url: '/metrics' })).body;
    await expect
      .poll(scrape, { timeout: 2000, interval: 50 })
      .toMatch(/sightline_provider_queued\{provider="openai",state="waiting"\} [1-4]\n/);
    expect(await scrape()).toMatch(/sightline_provider_queued\{provider="openai",state="active"\} 2\n/);
    // Two completions at a time per worker here (COMPLETION_CONCURRENCY=2), and the waiting ones hold neither.
    const other = await timed(() => api('POST', '/completion', anthropic('meanwhile')));
    expect(other.value.json()).toMatchObject({ status: 'success' });
    expect(other.ms).toBeLessThan(600);
    for (const res of await Promise.all(calls)) expect(res.json()).toMatchObject({ status: 'success' });
    expect(h.gw.openai.maxInFlight).toBe(2);
    expect(h.gw.openai.refused).toBe(0);
  });

  it("takes a saved key's limits, shows them, and refuses a limit that is not a positive integer", async () => {
    const bad = await api('POST', '/provider-keys', { provider: 'openai', api_key: 'sk-x', max_concurrent: 0 });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'max_concurrent']);
    const saved = await api('POST', '/provider-keys', {
      provider: 'openai',
      api_key: 'sk-saved-with-limits',
      base_url: h.gw.openai.baseURL,
      max_concurrent: 1,
      tpm: 50,
    });
    expect(saved.json()).toMatchObject({ max_concurrent: 1, rpm: null, tpm: 50 });
    h.gw.openai.responseDelayMs = 200;
    // Each call is estimated at its prompt and max_tokens (about 12 + 40, at most the 50 a minute): the
    // first goes, and is counted at the ~10 tokens its provider reports; the second's estimate does not fit.
    const calls = await Promise.all(
      [1, 2].map((i) => api('POST', '/completion', openai(`k${i}`, { model_params: { max_length: 40 } }))),
    );
    expect(calls.map((r) => r.json().status).sort()).toEqual(['error', 'success']);
    expect(h.gw.openai.requests).toHaveLength(1);
    expect(h.gw.openai.requests[0].headers.authorization).toBe('Bearer sk-saved-with-limits');
    await api('POST', '/provider-keys', {
      provider: 'openai',
      api_key: 'sk-saved-no-limits',
      base_url: h.gw.openai.baseURL,
      max_concurrent: 1,
    });
    h.gw.openai.requests.length = 0;
    const limited = await Promise.all([1, 2, 3].map((i) => api('POST', '/completion', openai(`c${i}`))));
    for (const res of limited) expect(res.json()).toMatchObject({ status: 'success' });
    expect(h.gw.openai.maxInFlight).toBe(1);
  });

  /** A saved OpenAI key (a lane of its own) with 60 tokens a minute; each call below is estimated at ~48. */
  const saveTpmKey = (apiKey: string) =>
    api('POST', '/provider-keys', { provider: 'openai', api_key: apiKey, base_url: h.gw.openai.baseURL, tpm: 60 });

  it('counts the tokens the provider reports against tokens a minute, in place of the estimate', async () => {
    await saveTpmKey('sk-saved-tpm');
    // Estimated before the call at its prompt and max_tokens (about 8 + 40), each call is reported by the
    // provider at about 10 tokens: two in a row fit in 60 a minute once the first is counted as it was.
    for (const i of [1, 2]) {
      const res = await api('POST', '/completion', openai(`t${i}`, { model_params: { max_length: 40 } }));
      expect(res.json()).toMatchObject({ status: 'success', content: `echo: t${i}` });
      expect(res.json().total_tokens).toBeLessThan(20);
    }
    expect(h.gw.openai.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-saved-tpm',
      'Bearer sk-saved-tpm',
    ]);
  });

  it('keeps the estimate of a call that failed after its provider took it: it may have been counted', async () => {
    await saveTpmKey('sk-saved-tpm-failing');
    h.gw.openai.plan({ status: 500 });
    const failed = await api('POST', '/completion', openai('f1', { model_params: { max_length: 40 } }));
    expect(failed.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/HTTP 500/) });
    // Its ~48 estimated tokens stand: the next call's estimate does not fit in the minute, so it is not made.
    const next = await api('POST', '/completion', openai('f2', { model_params: { max_length: 40 } }));
    expect(next.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/^not called/) });
    expect(h.gw.openai.requests).toHaveLength(1);
  });
});

describe('two worker processes', () => {
  const workers: ChildProcess[] = [];
  let gw: Gateway;
  let key = '';
  beforeAll(async () => {
    gw = await startGateway({ COMPLETION_TIMEOUT_MS: '10000', PROVIDER_MAX_RETRIES: '0', OPENAI_MAX_CONCURRENT: '3' });
    await gw.stack.stopWorker(); // the two processes below do the work
    key = (await newOrganization(sql, 'two-workers')).key;
    const env = {
      DATABASE_URL: databaseUrl(),
      REDIS_URL: redisUrl(),
      QUEUE_PREFIX: gw.stack.prefix,
      LOG_LEVEL: 'info',
      OPENAI_BASE_URL: gw.openai.baseURL,
      OPENAI_API_KEY: 'sk-env-openai',
      OPENAI_MAX_CONCURRENT: '3',
      COMPLETION_TIMEOUT_MS: '10000',
      PROVIDER_MAX_RETRIES: '0',
      SECRETS_KEY: gw.secretsKey,
    };
    for (let i = 0; i < 2; i++)
      workers.push((await startScript('apps/worker/src/main.ts', env, /worker started/, 60_000)).child);
  }, 120_000);
  afterAll(async () => {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((resolve) => w.once('exit', resolve))));
    await gw?.close();
  });

  it('share one limit: at most that many calls at once, no 429, every caller answered', async () => {
    gw.openai.responseDelayMs = 100;
    gw.openai.admit = { concurrent: 3, retryAfter: '1' };
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call(gw.stack.app, key, 'POST', '/completion', openai(`w${i}`))),
    );
    for (const res of results) expect(res.json()).toMatchObject({ status: 'success' });
    expect(gw.openai.requests).toHaveLength(24);
    expect(gw.openai.maxInFlight).toBe(3);
    expect(gw.openai.refused).toBe(0);
  });

  it('share a pause: a 429 seen by one holds back the calls of both', async () => {
    gw.openai.requests.length = 0;
    gw.openai.plan({ status: 429, retryAfter: '3' });
    const first = call(gw.stack.app, key, 'POST', '/completion', openai('first', { temperature: 0.1 }));
    // Once the worker that met the refusal has paused the lane (its queue's rate limit, set after the lane
    // is marked hot in Redis), and the other worker has read the hot lanes (every 500 ms) twice since: on a
    // busy machine no fixed wait from the refusal is long enough.
    const { redis, keyPrefix } = gw.stack.app;
    const paused = async () => {
      const limiters = await redis.keys(`${keyPrefix}:completion-lane-*:limiter`);
      return limiters.length ? redis.pttl(limiters[0]!) : -2;
    };
    await expect.poll(paused, { timeout: 5000, interval: 10 }).toBeGreaterThan(0);
    await sleep(1000);
    const rest = Array.from({ length: 6 }, (_, i) => call(gw.stack.app, key, 'POST', '/completion', openai(`r${i}`)));
    for (const res of await Promise.all([first, ...rest])) expect(res.json()).toMatchObject({ status: 'success' });
    const [refusal, ...after] = gw.openai.requests;
    expect(after).toHaveLength(7);
    for (const r of after) expect(r.at - refusal.at).toBeGreaterThanOrEqual(2950);
  });
});
