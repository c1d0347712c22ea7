import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { createChaosStack, sleep, type ChaosStack } from '../support/private-services';
import { recordFigures, seconds } from './lib/figures';
import { apiClient } from './lib/http';
import { newSpan, outcomeOf, spanLoad, tally } from './lib/load';

// Fault 5: SIGTERM reaches the API and the worker together, under load (as `docker compose stop` sends
// it). Each shuts down in order: the API stops accepting connections, answers every request it had
// begun, then closes its queues, Redis and SQL; the worker finishes the jobs it holds and leaves the
// rest queued. No job is left stalled, and every acknowledged span is stored once both are back.

let stack: ChaosStack;
let openai: FakeOpenAI;

beforeAll(async () => {
  openai = await new FakeOpenAI().start();
  // A completion in flight at the signal: its provider answers after the signal.
  openai.responseDelayMs = 3000;
  stack = await createChaosStack('sigterm', { env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-chaos' } });
  stack.own({ close: () => openai.stop() });
});
afterAll(async () => stack?.close());

/** The request ids (x-request-id) of the API's log lines with this message. */
const requestIdsLogged = (log: string, msg: string) =>
  new Set(
    log
      .split('\n')
      .filter((l) => l.includes(`"msg":"${msg}`))
      .map((l) => /"reqId":"([^"]+)"/.exec(l)?.[1])
      .filter((id): id is string => !!id?.startsWith('chaos-')),
  );

describe('SIGTERM under load', () => {
  it('answers every request the API had begun, leaves no job stalled, and loses nothing acknowledged', async () => {
    const api = await stack.startApi({ LOG_LEVEL: 'info' });
    const worker = await stack.startWorker();
    // Half the clients open a connection per request, half keep theirs open between requests (an idle
    // kept connection may be closed by the shutdown just as a request is sent on it: that request was
    // never begun, and the client sees a reset it can retry).
    const fresh = () => apiClient(api.base, stack.key, false);
    const keptAlive = apiClient(api.base, stack.key, new Agent({ keepAlive: true }));
    expect(outcomeOf(await fresh().post('/trace_logs/batch', { trace_logs: [newSpan('chaos')] }))).toBe('200');

    const loads = [
      spanLoad(fresh, { lanes: 3, batchSize: 100, pauseMs: 5, project: 'chaos', label: 'fresh' }),
      spanLoad(() => keptAlive, { lanes: 3, batchSize: 100, pauseMs: 5, project: 'chaos', label: 'kept' }),
    ];
    const load = { records: loads.flatMap((l) => l.records), acked: loads.flatMap((l) => l.acked) };
    await sleep(4000);
    const completion = fresh().post('/completion', {
      project_name: 'chaos',
      llm_configuration: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'finish me' }],
      },
    });
    let completionDoneAt = 0;
    void completion.then(() => (completionDoneAt = Date.now()));
    while (!openai.requests.length) await sleep(20);
    const before = await stack.jobCounts();
    const termAt = Date.now();
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    // Before it closes its listener (SHUTDOWN_DELAY_MS, 500 ms by default), the API says it is going.
    const readyz = async () => (await fetch(`${api.base}/readyz`)).status;
    await expect.poll(readyz, { interval: 25, timeout: 400 }).toBe(503);
    const [apiExit, workerExit] = await Promise.all(
      [api, worker].map(async (p) => ({ ...(await p.exited), after_s: seconds(Date.now() - termAt) })),
    );
    const after = await stack.jobCounts();
    const completed = await completion;
    // Its log, written by the worker that answered it before that worker exited (not left to the next one's upkeep).
    const completionTrace = completed.kind === 'response' ? (JSON.parse(completed.body) as { trace_id: string }) : null;
    const completionLogStored = completionTrace ? await stack.storedCount([completionTrace.trace_id]) : 0;
    await sleep(500);
    await Promise.all(loads.map((l) => l.stop()));
    Object.assign(load, { records: loads.flatMap((l) => l.records), acked: loads.flatMap((l) => l.acked) });

    const begun = new Set([
      ...requestIdsLogged(api.output(), 'incoming request'),
      ...requestIdsLogged(api.output(), 'request aborted'),
    ]);
    const answered = new Set(load.records.filter((r) => /^\d+$/.test(r.outcome)).map((r) => r.id));
    const cut = [...begun].filter((id) => !answered.has(id));
    const inFlight = load.records.filter((r) => r.sentAt < termAt && r.doneAt > termAt);

    const api2 = await stack.startApi();
    await stack.startWorker();
    const drainMs = await stack.waitForDrain();
    const stored = await stack.storedCount(load.acked);
    const failed = (await stack.jobCounts()).failed;

    const figures = {
      jobs_at_sigterm: { waiting: before.wait, active: before.active },
      api_exit: apiExit,
      worker_exit: workerExit,
      jobs_after_exit: { waiting: after.wait, active: after.active, delayed: after.delayed },
      requests_in_flight_at_sigterm: tally(inFlight),
      completion_in_flight_at_sigterm: outcomeOf(completed),
      completion_log_stored_at_exit: completionLogStored,
      requests: { connection_per_request: tally(loads[0].records), kept_alive: tally(loads[1].records) },
      requests_begun_by_api: begun.size,
      begun_but_cut: cut.length,
      spans_acknowledged: load.acked.length,
      spans_stored_after_restart: stored,
      drain_after_restart_s: seconds(drainMs),
      failed_jobs: failed,
    };
    recordFigures('sigterm', figures);

    expect(apiExit).toMatchObject({ code: 0, signal: null });
    expect(workerExit).toMatchObject({ code: 0, signal: null });
    expect(api.output()).toMatch(/"msg":"shut down"/);
    expect(worker.output()).toMatch(/"msg":"shut down"/);
    expect(api.output() + worker.output()).not.toMatch(/shutdown step failed|shutdown deadline passed/);
    expect(after.active).toBe(0);
    expect(outcomeOf(completed)).toBe('200');
    expect(completed.kind === 'response' && JSON.parse(completed.body)).toMatchObject({
      status: 'success',
      content: 'echo: finish me',
    });
    // Every answer is an acknowledgement: a request the API took during the shutdown was served.
    expect(load.records.filter((r) => /^\d+$/.test(r.outcome) && r.outcome !== '200')).toEqual([]);
    // The completion was in flight at the signal (its provider had it, and answers 3 s later); span
    // requests usually are too, but their timing is the load's, so only theirs is not asserted.
    expect(completionDoneAt - termAt).toBeGreaterThan(1000);
    expect(completionLogStored).toBe(1);
    expect(inFlight.filter((r) => !/^\d+$/.test(r.outcome))).toEqual([]);
    expect(begun.size).toBeGreaterThan(100);
    expect(cut).toEqual([]);
    expect(stored).toBe(load.acked.length);
    expect(failed).toBe(0);
    expect(outcomeOf(await apiClient(api2.base, stack.key).get(`/trace_log/${load.acked.at(-1)}`))).toBe('200');
  });
});
