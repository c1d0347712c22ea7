import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/fake-openai';
import { createChaosStack, sleep, type ChaosStack, type ManagedProcess } from '../support/private-services';
import { apiClient, type ApiClient, type Outcome } from './lib/http';

// Many processes at once, as a scaled-out deployment runs them: two API processes and three worker
// processes on one PostgreSQL and one Redis. What a user relies on must hold whichever process serves
// them: reads see writes made through another API node, streams reach the node their caller is on,
// experiments count every write accepted by any node, and a worker killed mid-batch loses nothing.

let stack: ChaosStack;
let openai: FakeOpenAI;
let apis: (ManagedProcess & { base: string })[];
let workers: ManagedProcess[];
/** Every worker started, the killed ones too: any of them may be the one that finds a stalled job. */
const everyWorker: ManagedProcess[] = [];
let a: ApiClient, b: ApiClient;

beforeAll(async () => {
  openai = await new FakeOpenAI().start();
  openai.chunkDelayMs = 10;
  stack = await createChaosStack('scale-out', {
    env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: 'sk-fake', SHUTDOWN_DELAY_MS: '0' },
  });
  stack.own({ close: () => openai.stop() });
  apis = await Promise.all([stack.startApi(), stack.startApi()]);
  workers = await Promise.all([stack.startWorker(), stack.startWorker(), stack.startWorker()]);
  everyWorker.push(...workers);
  [a, b] = apis.map((api) => apiClient(api.base, stack.key));
}, 180_000);
afterAll(async () => stack?.close());

const json = (o: Outcome) => {
  if (o.kind !== 'response') throw new Error(`no response: ${o.code}`);
  if (o.status !== 200) throw new Error(`${o.status}: ${o.body.slice(0, 300)}`);
  return JSON.parse(o.body);
};

/** Server-Sent Events from a response, as they arrive; `ID_START` lines are the stream's id preamble. */
async function* sseData(res: Response): AsyncGenerator<{ event?: string; data: any }> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    let end;
    while ((end = text.search(/\r?\n\r?\n/)) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end).replace(/^\r?\n\r?\n/, '');
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: ?(.*)$/m.exec(block)?.[1];
      if (data && !data.startsWith('ID_START')) yield { event, data: JSON.parse(data) };
    }
  }
}

describe('two API processes and three workers on one PostgreSQL and one Redis', () => {
  it('reads back through one API process what was written through the other, at once', async () => {
    const project = `rw-${randomUUID()}`;
    for (let i = 0; i < 40; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      const trace_id = randomUUID();
      json(
        await writer.post('/trace_log', { trace_id, project_name: project, trace_name: `span-${i}`, inputs: { i } }),
      );
      expect(json(await reader.get(`/trace_log/${trace_id}`))).toMatchObject({
        trace_name: `span-${i}`,
        inputs: { i },
      });
      // An update through the reader is seen by the writer's next read.
      json(await reader.put('/trace_log', { trace_id, field_name_to_value_map: { output: `out-${i}` } }));
      expect(json(await writer.get(`/trace_log/${trace_id}`))).toMatchObject({
        trace_name: `span-${i}`,
        output: `out-${i}`,
      });
    }
  });

  it("relays each streamed completion to its own caller's API process, and shows its log live on the other", async () => {
    const project = json(await a.post('/project', { name: `live-${randomUUID()}` }));
    const live = new AbortController();
    const liveRes = await fetch(`${apis[1].base}/api/svc/v1/traces/live?project_uuid=${project.uuid}`, {
      headers: { 'x-api-key': stack.key },
      signal: live.signal,
    });
    const seenLive = new Set<string>();
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    const watching = (async () => {
      for await (const { event, data } of sseData(liveRes)) {
        if (event === 'ready') ready();
        if (event === 'trace') seenLive.add(data.trace_id);
      }
    })().catch(() => {});
    await isReady;

    // Six streams through each API process at once, each with its own words.
    const streams = Array.from({ length: 12 }, async (_, i) => {
      const api = apis[i % 2];
      const trace_id = randomUUID();
      const words = Array.from({ length: 6 }, (_, k) => `w${i}x${k}`).join(' ');
      const res = await fetch(`${api.base}/api/svc/v1/completion/stream`, {
        method: 'POST',
        headers: { 'x-api-key': stack.key, 'content-type': 'application/json' },
        body: JSON.stringify({
          trace_id,
          project_uuid: project.uuid,
          llm_configuration: { provider: 'openai', model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] },
        }),
      });
      expect(res.status).toBe(200);
      const payloads: any[] = [];
      for await (const { data } of sseData(res)) payloads.push(data);
      return { trace_id, words, payloads };
    });
    for (const { trace_id, words, payloads } of await Promise.all(streams)) {
      expect(payloads.length).toBeGreaterThan(2); // chunk by chunk, not one answer
      expect(payloads.map((p) => p.chunk).join('')).toBe(`echo: ${words}`);
      expect(payloads.at(-1)).toMatchObject({ status: 'success', content: `echo: ${words}`, trace_id });
    }
    const ids = (await Promise.all(streams)).map((s) => s.trace_id);
    await expect.poll(() => ids.filter((id) => seenLive.has(id)).length, { timeout: 15_000 }).toBe(ids.length);
    live.abort();
    await watching;
  });

  it('finishes an experiment while spans are written through both, counting every write accepted before', async () => {
    const project = json(await a.post('/project', { name: `exp-${randomUUID()}` }));
    const experiment = json(await b.post('/experiment', { name: 'scaled', project_uuid: project.uuid }));
    const sent = new Map<string, { sentAt: number; doneAt: number }>();
    let writing = true;
    const writer = async (api: ApiClient, lane: number) => {
      for (let i = 0; writing; i++) {
        const trace_id = randomUUID();
        const o = await api.post('/trace_log', {
          trace_id,
          project_uuid: project.uuid,
          experiment_uuid: experiment.uuid,
          scores: [{ name: 'acc', score: (i + lane) % 2 }],
        });
        json(o);
        sent.set(trace_id, o);
      }
    };
    const writers = [a, b, a, b].map(writer);
    await sleep(1500);
    const finishSentAt = Date.now();
    const finished = json(await b.post(`/experiment/${experiment.uuid}/finished`, {}));
    const finishDoneAt = Date.now();
    await sleep(300); // writes go on after the finish too
    writing = false;
    await Promise.all(writers);

    // Every write answered before the finish was sent is counted; none sent after it was answered is.
    const answeredBefore = [...sent.values()].filter((w) => w.doneAt < finishSentAt).length;
    const sentBefore = [...sent.values()].filter((w) => w.sentAt < finishDoneAt).length;
    expect(answeredBefore).toBeGreaterThan(20);
    const [listed] = json(await a.post('/experiments', { experiment_uuids: [experiment.uuid] }));
    expect(listed.status).toBe('completed');
    expect(listed.num_samples).toBeGreaterThanOrEqual(answeredBefore);
    expect(listed.num_samples).toBeLessThanOrEqual(sentBefore);
    expect(listed.num_samples).toBeLessThan(sent.size); // it did not wait for the writes that came later
    // The stats name only written roots, each once.
    const stats: { trace_id: string }[] = finished.parent_trace_stats;
    expect(new Set(stats.map((s) => s.trace_id)).size).toBe(stats.length);
    for (const s of stats) expect(sent.has(s.trace_id)).toBe(true);
  });

  it('loses and duplicates nothing when a worker is killed mid-batch, with writes through both API processes', async () => {
    const SPANS = 20_000;
    const BATCH = 500;
    const project = `kill-${randomUUID()}`;
    const ids = Array.from({ length: SPANS }, () => randomUUID());
    const t0 = Date.now();
    const create = (i: number) => ({
      trace_id: ids[i],
      project_name: project,
      trace_name: `span-${i}`,
      inputs: { i },
      start_timestamp: new Date(t0 + i).toISOString(),
    });
    const finish = (i: number) => ({ trace_id: ids[i], project_name: project, output: `out-${i}` });
    const range = (from: number, n: number) => Array.from({ length: n }, (_, k) => from + k);
    async function accepted(send: () => Promise<Outcome>) {
      for (;;) {
        const o = await send();
        if (o.kind === 'response' && o.status === 200) return;
        if (o.kind === 'response' && o.status !== 429 && o.status !== 503) json(o); // throws
        await sleep(200);
      }
    }
    const lanes = [a, b, a, b].map(async (api, lane) => {
      for (let batch = lane; batch < SPANS / BATCH; batch += 4) {
        const span = range(batch * BATCH, BATCH);
        await accepted(() => api.post('/trace_logs/batch', { trace_logs: span.map(create) }));
        await accepted(() => api.post('/trace_logs/batch', { trace_logs: span.map(finish) }));
      }
    });

    let ingested = false;
    const ingesting = Promise.all(lanes).finally(() => (ingested = true));

    // While the writes go on, a worker holding jobs is killed now and then and a replacement started: the
    // one killed is the oldest, and kills come only while jobs are being written (each worker takes jobs
    // as they come, so with several active, the victim most likely holds some; the stalled jobs found
    // afterwards show it did).
    let killed = 0;
    while (!ingested && killed < 6) {
      await sleep(700);
      if ((await stack.jobCounts()).active < 2) continue;
      const victim = workers.shift()!;
      await victim.signal('SIGKILL');
      killed++;
      workers.push(await stack.startWorker());
      everyWorker.push(workers.at(-1)!);
    }
    expect(killed).toBeGreaterThan(0);
    await ingesting;
    await stack.waitForDrain(240_000);

    const [row] = await stack.sql<{ n: number; distinct_ids: number; created: number; finished: number }[]>`
      select count(*)::int as n,
             count(distinct trace_id)::int as distinct_ids,
             count(*) filter (where trace_name = 'span-' || (inputs->>'i'))::int as created,
             count(*) filter (where output = 'out-' || (inputs->>'i'))::int as finished
      from spans
      where organization_id = ${stack.organizationId} and trace_id = any(${ids}::uuid[])`;
    expect(row).toEqual({ n: SPANS, distinct_ids: SPANS, created: SPANS, finished: SPANS });
    // The killed workers held jobs: a surviving worker found them stalled and ran them again.
    const stalled = everyWorker.flatMap((w) => [...w.output().matchAll(/"msg":"job stalled/g)]);
    expect(stalled.length).toBeGreaterThan(0);
  });
});
