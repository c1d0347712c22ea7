import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLlmRequest } from '@sightline/llm/prepare';
import { redisKeys } from '@sightline/queues';
import { CallsInFlight } from '../../apps/worker/src/gateway/calls-in-flight';
import { callProvider, type ProviderCallDeps } from '../../apps/worker/src/gateway/provider-call';
import { createSavedKeys } from '../../apps/worker/src/gateway/saved-keys';
import { FakeOpenAI } from '../fakes/fake-openai';
import { redisUrl, testSql, uniquePrefix } from '../support/services';

// A queued call's budget is what is left of its caller's deadline when the call starts. Its key and its
// admission come first and take time of their own on a loaded worker (a slow admission here, 1 s): a
// budget measured before them would let the call run that much past the deadline, after the API's grace.

// A full garbage collection on demand, as on a loaded worker between a call's headers and its deadline.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const sql = testSql();
const redis = new Redis(redisUrl());
const subscriber = new Redis(redisUrl());
const openai = new FakeOpenAI();
let deps: ProviderCallDeps;

beforeAll(async () => {
  await openai.start();
  const keys = redisKeys(uniquePrefix('call-deadline'));
  deps = {
    savedKeys: createSavedKeys(sql, subscriber, keys.providerKeysChanged),
    env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-env-openai' },
    allowPrivateUrls: false,
    redis,
    keys,
    callsInFlight: new CallsInFlight(),
    timeoutMs: 10_000,
    maxRetries: 0,
    cacheTtlSeconds: 60,
  };
});
afterAll(async () => {
  await deps?.savedKeys.close(); // quits the subscriber
  redis.disconnect();
  await Promise.all([openai.stop(), sql.end()]);
});

/** One call to the fake OpenAI through the worker's provider call, bounded by `deadline` (epoch ms). */
function callOpenAi(deadline: number, opts: { admissionMs?: number; onChunk?: (text: string) => void } = {}) {
  return callProvider(
    deps,
    {
      organization_id: randomUUID(),
      trace_id: randomUUID(),
      request_id: randomUUID(),
      stream: opts.onChunk !== undefined,
      cache: false,
      request: buildLlmRequest(
        { model: 'gpt-4o-mini', provider: 'openai', messages: [{ role: 'user', content: 'hello' }] },
        {},
      ),
      deadline_ms: deadline,
    },
    opts.onChunk,
    pino({ level: 'silent' }),
    {
      deadline,
      admit: async () => {
        await new Promise((resolve) => setTimeout(resolve, opts.admissionMs ?? 0));
        return { go: true };
      },
    },
  );
}

describe("a queued call's budget", () => {
  it('ends the call at its deadline, however long its admission took', async () => {
    const budgetMs = 2000;
    const admissionMs = 1000;
    const startedAt = Date.now();
    const deadline = startedAt + budgetMs;
    openai.plan({ stallAfterChunks: 0 }); // headers, then nothing: only the budget ends the call
    const outcome = await callOpenAi(deadline, { admissionMs });
    expect(outcome.error).toMatch(/timed out: the call took longer than its budget/);
    const [call] = openai.requests;
    expect(call!.at - startedAt).toBeGreaterThanOrEqual(admissionMs);
    // The provider sees the connection close a moment after the call gave up on it.
    await expect.poll(() => call!.endedAt).toBeDefined();
    // At the deadline, with a scheduler's slack; a budget counted before the admission ends a second later.
    expect(call!.endedAt! - deadline).toBeLessThan(admissionMs / 2);
  });

  // Node 20's fetch lost the call's signal in a garbage collection once the headers were in: the call then
  // read its stalled body forever, holding its worker slot and its provider's lane.
  it.each([
    ['a whole answer', undefined],
    ['a stream', () => {}],
  ])(
    'ends %s stalled after its headers at its deadline, after a garbage collection too',
    async (_, onChunk) => {
      openai.requests.length = 0;
      openai.plan({ stallAfterChunks: onChunk ? 1 : 0 });
      const deadline = Date.now() + 1500;
      const outcome = callOpenAi(deadline, { onChunk });
      await expect.poll(() => openai.requests.length).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the headers are in
      for (let i = 0; i < 3; i++) {
        collectGarbage();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect((await outcome).error).toMatch(/timed out: the call took longer than its budget/);
      await expect.poll(() => openai.requests[0]!.endedAt, { timeout: 2000 }).toBeDefined();
    },
    10_000,
  );
});
