import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBudgetMs } from '@sightline/llm/prepare';
import { FakeOpenAI } from '../fakes/fake-openai';
import { createChaosStack, sleep, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient, type Outcome } from './lib/http';

// Fault 6: a worker dies (SIGKILL) while the provider is answering its completions. The policy is at
// most once: a completion job is never run again (attempts 1, maxStalledCount 0), so the provider is
// never called twice for one request and no cost is logged twice. The worker that finds the stalled job
// fails it and tells the waiting caller (503), instead of the caller waiting out its whole budget.

let stack: ChaosStack;
let openai: FakeOpenAI;
const PROVIDER_DELAY_MS = 6000;

beforeAll(async () => {
  openai = await new FakeOpenAI().start();
  openai.responseDelayMs = PROVIDER_DELAY_MS;
  stack = await createChaosStack('completion-kill', {
    env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-chaos' },
  });
  stack.own({ close: () => openai.stop() });
});
afterAll(async () => stack?.close());

const request = (trace_id: string, content: string) => ({
  trace_id,
  project_name: 'chaos',
  llm_configuration: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
});
/** The last `data:` event of an SSE body. */
const lastEvent = (o: Outcome) =>
  o.kind === 'response'
    ? JSON.parse(
        o.body
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)!
          .slice(5),
      )
    : null;

describe('a worker dies during a completion', () => {
  it('neither calls the provider again nor logs a cost twice, and tells the caller at once', async () => {
    const api = await stack.startApi();
    const doomed = await stack.startWorker();
    const client = () => apiClient(api.base, stack.key);

    const ids = Array.from({ length: 5 }, () => randomUUID());
    const streamId = randomUUID();
    const calls = [
      ...ids.map((id, i) => client().post('/completion', request(id, `question ${i}`), { timeoutMs: 300_000 })),
      client().post('/completion/stream', request(streamId, 'streamed question'), { timeoutMs: 300_000 }),
    ];
    const t0 = Date.now();
    while (openai.requests.length < calls.length) {
      if (Date.now() - t0 > 30_000) throw new Error(`only ${openai.requests.length} provider calls arrived`);
      await sleep(50);
    }
    // The survivor starts after the doomed worker took every job, so it cannot be the one answering them.
    const survivor = await stack.startWorker();
    await doomed.signal('SIGKILL');
    const killedAt = Date.now();
    const answers = await Promise.all(calls.map(async (c) => ({ o: await c, at: Date.now() })));
    const plain = answers.slice(0, ids.length);
    const streamed = answers[ids.length];

    // Long enough for any second attempt to have reached the provider.
    await sleep(PROVIDER_DELAY_MS + 2000);
    const providerCallsAfterKill = openai.requests.length;
    const logged = await stack.sql<
      { n: number }[]
    >`select count(*)::int as n from spans where trace_id = any(${[...ids, streamId]}::uuid[])`;
    const completions = new Queue('completion', { connection: stack.redisClient, prefix: stack.prefix });
    const failedJobs = await completions.getFailed();

    // The survivor answers new completions, each logged once with its cost.
    openai.responseDelayMs = 0;
    const fresh = randomUUID();
    const ok = await client().post('/completion', request(fresh, 'and now?'));
    await stack.waitForDrain();
    const freshLog = await stack.sql<
      { n: number; cost: number }[]
    >`select count(*)::int as n, sum(cost)::float8 as cost from spans where trace_id = ${fresh}`;

    const figures = {
      completions_in_flight_at_kill: calls.length,
      provider_latency_s: seconds(PROVIDER_DELAY_MS),
      answers: plain.map((a) => (a.o.kind === 'response' ? a.o.status : a.o.code)),
      stream_final_event: lastEvent(streamed.o),
      caller_told_after_kill_s: {
        min: seconds(Math.min(...answers.map((a) => a.at - killedAt))),
        max: seconds(Math.max(...answers.map((a) => a.at - killedAt))),
      },
      caller_wait_budget_without_it_s: seconds(callBudgetMs(60_000, 2) + 30_000),
      provider_calls: providerCallsAfterKill,
      spans_logged_for_killed_completions: logged[0].n,
      failed_jobs: failedJobs.map((j) => j.failedReason),
      completion_after_kill: ok.kind === 'response' ? ok.status : ok.code,
      spans_logged_for_it: freshLog[0].n,
      provider_calls_total: openai.requests.length,
    };
    recordFigures('completion-worker-kill', figures);
    await completions.close();

    for (const { o } of plain) {
      expect(o.kind === 'response' && o.status).toBe(503);
      expect(o.kind === 'response' && JSON.parse(o.body).detail).toMatch(
        /stopped before it finished; it is not run again, so that the provider is called at most once/,
      );
    }
    expect(figures.stream_final_event).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/stopped before it finished/),
      trace_id: streamId,
    });
    expect(providerCallsAfterKill).toBe(calls.length);
    expect(logged[0].n).toBe(0);
    expect(failedJobs.map((j) => j.failedReason)).toEqual(
      Array(calls.length).fill('job stalled more than allowable limit'),
    );
    expect(figures.completion_after_kill).toBe(200);
    expect(freshLog[0]).toEqual({ n: 1, cost: JSON.parse((ok as { body: string }).body).cost });
    expect(openai.requests.length).toBe(calls.length + 1);
    expect(survivor.alive).toBe(true);
  });
});
