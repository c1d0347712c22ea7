import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectClientReadable } from '../support/client-contract';
import { useGateway } from '../support/fixtures';
import { newOrganization } from '../support/services';

// Real traffic of the official clients (copied from shared/spec/wire: one captured request per call of each
// client), replayed in order over HTTP against the API and worker, then read back as each client reads.
// Every answer must be 200 and readable under the clients' response contract.

type Sample = {
  client: 'python' | 'typescript';
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body: unknown;
};
const wireFile = (client: string) => new URL(`./wire/${client}-client.jsonl`, import.meta.url);
// The specification's own copy, beside the repository where it is checked out with shared/.
const specFile = (client: string) => new URL(`../../../shared/spec/wire/${client}-client.jsonl`, import.meta.url);
const samples = (client: string): Sample[] =>
  readFileSync(wireFile(client), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(.*)$/;
const API_PREFIX = '/api/svc/v1';
/** `YYYY-MM-DD HH:MM:SS` in UTC, as trace logs answer an ISO 8601 time. */
const wireTime = (iso: string) => new Date(iso).toISOString().slice(0, 19).replace('T', ' ');

/**
 * One replay of a file. Captured ids become ids of this run: trace ids fresh ones, the project, experiment,
 * dataset and test case ids those the server answered when the replay created them, so the file can run
 * again and again. Timestamps move by whole seconds (keeping their fraction and zone) to just before now,
 * so that `time_range: 1h` finds them.
 */
class Replay {
  readonly ids = new Map<string, string>();
  /** Every request as sent (path and body rewritten for this run) with its answer. */
  readonly exchanges: { sample: Sample; path: string; sent: any; status: number; body: any; text: string }[] = [];
  private project: string | null = null;
  private experiment: string | null = null;
  private readonly datasetIds: number[] = [];
  private readonly testCaseIds: number[] = [];
  private readonly capturedDatasets: number[] = [];
  private readonly capturedCases: number[] = [];
  private readonly shiftSeconds: number;

  constructor(
    readonly base: string,
    readonly key: string,
    readonly file: Sample[],
  ) {
    const times: number[] = [];
    JSON.stringify(
      file,
      (k, v) => (
        k.endsWith('_timestamp') && typeof v === 'string' && TIMESTAMP.test(v) && times.push(Date.parse(v)),
        v
      ),
    );
    this.shiftSeconds = Math.floor((Date.now() - 60_000 - Math.max(...times)) / 1000);
  }

  /** This run's id for a captured one. */
  id(captured: string): string {
    let mine = this.ids.get(captured);
    if (!mine) this.ids.set(captured, (mine = randomUUID()));
    return mine;
  }

  private bound(captured: string, mine: string): string {
    if (!this.ids.has(captured)) this.ids.set(captured, mine);
    return this.ids.get(captured)!;
  }

  /** The time moved by whole seconds; its fraction and zone are kept as written (the date-time is local to the zone). */
  private time(captured: string): string {
    const [, local, rest] = captured.match(TIMESTAMP)!;
    return new Date(Date.parse(`${local}Z`) + this.shiftSeconds * 1000).toISOString().slice(0, 19) + rest;
  }

  private rewrite(value: unknown, key = ''): unknown {
    if (Array.isArray(value)) return value.map((v) => this.rewrite(v));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.rewrite(v, k)]));
    if (typeof value !== 'string') return value;
    if (key === 'project_uuid' && this.project) return this.bound(value, this.project);
    if (key === 'experiment_uuid' && this.experiment) return this.bound(value, this.experiment);
    if (key.endsWith('_timestamp') && TIMESTAMP.test(value)) return this.time(value);
    return UUID.test(value) ? this.id(value) : value;
  }

  private path(captured: string): string {
    const path = captured.slice(API_PREFIX.length);
    const experiment = path.match(/^\/experiment\/([^/]+)\//);
    if (experiment) return path.replace(experiment[1], this.bound(experiment[1], this.experiment!));
    // Captured dataset and test case ids name, in the order they first appear, the ones this file created.
    const update = path.match(/^\/update_test_case\/(\d+)\/(\d+)$/);
    if (update) {
      const [dataset, testCase] = [Number(update[1]), Number(update[2])];
      if (!this.capturedDatasets.includes(dataset)) this.capturedDatasets.push(dataset);
      if (!this.capturedCases.includes(testCase)) this.capturedCases.push(testCase);
      return `/update_test_case/${this.datasetIds[this.capturedDatasets.indexOf(dataset)]}/${this.testCaseIds[this.capturedCases.indexOf(testCase)]}`;
    }
    return path
      .split('/')
      .map((part) => (UUID.test(part) ? this.id(part) : part))
      .join('/');
  }

  /** Sends a request with the client's headers and the key; a 200 JSON answer must meet the clients' contract. */
  private async send(method: string, path: string, body: unknown, headers: Record<string, string>) {
    const res = await fetch(`${this.base}${API_PREFIX}${path}`, {
      method,
      headers: { ...headers, 'x-api-key': this.key },
      body: body === null || body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const json = type.startsWith('application/json') ? JSON.parse(text) : undefined;
    if (res.status === 200 && json !== undefined) expectClientReadable(method, path, json);
    if (res.status === 200 && type.startsWith('text/event-stream'))
      sseEvents(text).forEach((event) => expectClientReadable(method, path, event));
    return { status: res.status, body: json, text };
  }

  async replay() {
    for (const sample of this.file) {
      const { ['content-type']: _contentType, ...sdkHeaders } = sample.headers;
      const headers = { ...sdkHeaders, ...(sample.body !== null && { 'content-type': 'application/json' }) };
      const path = this.path(sample.path);
      const sent = this.rewrite(sample.body);
      const answer = await this.send(sample.method, path, sent, headers);
      this.exchanges.push({ sample, path, sent, ...answer });
      if (answer.status !== 200) continue;
      if (path === '/project') this.project = answer.body.uuid;
      if (path === '/experiment') this.experiment = answer.body.uuid;
      if (path === '/collection') {
        this.datasetIds.push(answer.body.id);
        this.testCaseIds.push(...answer.body.test_case_ids);
      }
      if (path === '/testcases') this.testCaseIds.push(...answer.body);
    }
  }

  /** A read as the client makes it (its x-sdk-language), checked against the contract. */
  async read(method: 'GET' | 'POST', path: string, body?: unknown) {
    const answer = await this.send(method, path, body, {
      'x-sdk-language': this.file[0].client,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    });
    expect(answer.status, `${method} ${path}: ${answer.text.slice(0, 500)}`).toBe(200);
    return answer.body;
  }

  /** The exchanges with this path (as sent, e.g. `/trace_log`, or a pattern). */
  to(path: string | RegExp) {
    return this.exchanges.filter((e) => (typeof path === 'string' ? e.path === path : path.test(e.path)));
  }
}

/** Server-Sent Events as the reference client reads them: the first `data:` line of each event, as JSON. */
function sseEvents(text: string): any[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) => event.split(/\r?\n/).find((line) => line.startsWith('data:')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice('data:'.length).trim()));
}

const { gw, sql } = useGateway();
let base: string;

beforeAll(async () => {
  await gw.stack.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(gw.stack.app.server.address() as AddressInfo).port}`;
});

/** A fresh organization, with the deployed prompt the samples fetch. */
async function organization(): Promise<string> {
  const { key } = await newOrganization(sql, 'client');
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${API_PREFIX}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };
  const version = await post('/prompts', {
    name: 'greeter',
    messages: [{ role: 'user', content: 'Say hello to {{name}}.' }],
    model: 'gpt-4o-mini',
    provider: 'openai',
    functions: [{ name: 'wave', parameters: { type: 'object' } }],
  });
  await post('/deployments', { prompt_version_id: version.id, deployment_id: 'p-6_qJGbJHSNSB' });
  return key;
}

describe.each(['python', 'typescript'])('the %s client’s captured traffic', (client) => {
  const file = samples(client);
  let replay: Replay;

  beforeAll(async () => {
    replay = new Replay(base, await organization(), file);
    await replay.replay();
  });

  it('is answered 200 to every request, each answer readable by the client', () => {
    expect(
      replay.exchanges.map(
        (e) => `${e.sample.method} ${e.path} ${e.status}${e.status === 200 ? '' : ` ${e.text.slice(0, 300)}`}`,
      ),
    ).toEqual(replay.exchanges.map((e) => `${e.sample.method} ${e.path} 200`));
  });

  it('reads back the traced function as one tree in the clients’ dialect, each span as it was sent', async () => {
    const written = replay.to('/trace_log').map((e) => e.sent);
    const root = written.find((s) => s.depth === 0);
    const tree = await replay.read('GET', `/trace_log/${root.trace_id}`);
    const flat: any[] = [];
    const walk = (node: any) => (flat.push(node), node.children_logs.forEach(walk));
    walk(tree);
    expect(flat.map((s) => s.trace_id).sort()).toEqual(written.map((s) => s.trace_id).sort());
    for (const span of flat) {
      const sent = written.find((s) => s.trace_id === span.trace_id);
      expect(span).toMatchObject({
        trace_name: sent.trace_name,
        inputs: sent.inputs,
        output: sent.output,
        depth: sent.depth,
        execution_order: sent.execution_order,
      });
      expect(span.root_trace_id).toBe(root.trace_id);
      expect(span.start_timestamp).toBe(wireTime(sent.start_timestamp));
      expect(span.end_timestamp).toBe(wireTime(sent.end_timestamp));
      expect(span).not.toHaveProperty('children_ids');
      expect(span.children).toEqual(span.children_logs.map((c: any) => c.trace_id));
      expect(span).toMatchObject({ scores: [], images: [], comments: [], annotations: {} });
      // The Python client sends every configuration member, most of them null: none of the nulls comes back.
      if (sent.configuration)
        expect(span.configuration).toEqual({
          model_params: { temp: 1, top_p: 1, frequency_penalty: 0, presence_penalty: 0 },
        });
    }
    expect(tree).toMatchObject({ metadata: root.metadata, tags: root.tags });
    // The same tree is also listed, in the same dialect.
    const listed = await replay.read('POST', '/get_trace_logs', {
      project_name: replay.to('/project')[0].sent.name,
      time_range: '1h',
      page_size: 50,
    });
    expect(listed.results.find((r: any) => r.trace_id === root.trace_id)).toEqual(tree);
  });

  it('logs each completion, streamed or not, under the trace id the client gave', async () => {
    for (const exchange of replay.to(/^\/completion/)) {
      const id = exchange.sent.inference_id;
      const answer = exchange.path === '/completion' ? exchange.body : sseEvents(exchange.text).at(-1);
      expect(answer).toMatchObject({
        status: 'success',
        trace_id: id,
        inference_id: id,
        model: 'gpt-4o-mini',
        provider: 'openai',
      });
      if (exchange.path === '/completion/stream') {
        const events = sseEvents(exchange.text);
        expect(
          events
            .slice(0, -1)
            .map((e) => e.chunk)
            .join(''),
        ).toBe(answer.content);
      }
      const log = await replay.read('GET', `/trace_log/${id}`);
      const who = Object.values(exchange.sent.llm_inputs)[0];
      expect(log).toMatchObject({
        trace_id: id,
        root_trace_id: id,
        parent_trace_id: id,
        output: answer.content,
        inputs: exchange.sent.llm_inputs,
        children: [],
        children_logs: [],
      });
      expect(log.configuration.messages).toEqual([{ role: 'user', content: `hello ${who}` }]);
    }
    expect(replay.to(/^\/completion/).length).toBeGreaterThan(0);
  });

  it('keeps feedback for a span that is written after it', async () => {
    const [feedback] = replay.to('/feedback');
    const project = replay.to('/project')[0].sent.name;
    const late = await replay.read('POST', '/trace_log', {
      trace_id: feedback.sent.trace_id,
      project_name: project,
      trace_name: 'scored-later',
      start_timestamp: new Date().toISOString(),
    });
    expect(late.trace_id).toBe(feedback.sent.trace_id);
    expect(await replay.read('GET', `/trace_log/${feedback.sent.trace_id}`)).toMatchObject({
      feedback_score: feedback.sent.score,
      trace_name: 'scored-later',
    });
  });

  it('builds a dataset, extends and updates it, and reads it back', async () => {
    const [created] = replay.to('/collection');
    const [added] = replay.to('/testcases');
    const [updated] = replay.to(/^\/update_test_case\//);
    const dataset = await replay.read('GET', `/collection/${created.sent.name}`);
    const ids = [...created.body.test_case_ids, ...added.body];
    expect(Object.keys(dataset.test_cases).map(Number)).toEqual(ids);
    // The update names one of them; targets are stored as sent (JSON text from the TypeScript client, raw
    // from the Python one), and the update's own target raw.
    const updatedId = Number(updated.path.split('/').at(-1));
    const sent = [...created.sent.test_cases, ...added.sent.test_cases].map((c, i) =>
      ids[i] === updatedId ? { ...c, target: updated.sent.target } : c,
    );
    expect(ids).toContain(updatedId);
    expect(
      Object.values(dataset.test_cases).map((c: any) => [c.id, c.inputs, c.target, c.test_case_collection_id]),
    ).toEqual(sent.map((c, i) => [ids[i], c.inputs, c.target, created.body.id]));
    expect(dataset).toMatchObject({
      id: created.body.id,
      name: created.sent.name,
      column_names: created.sent.column_names,
    });
    expect(await replay.read('GET', `/collection/${created.body.id}`)).toEqual(dataset);
  });

  it('runs an experiment to completion and lists it with its stats', async () => {
    const [created] = replay.to('/experiment');
    const uuid = created.body.uuid;
    expect(replay.to(`/experiment/${uuid}/finished`)[0].body).toEqual({ parent_trace_stats: [] });
    const [listed] = await replay.read('POST', '/experiments', {
      project_name: replay.to('/project')[0].sent.name,
      experiment_uuids: [uuid],
    });
    expect(listed).toMatchObject({
      uuid,
      name: created.sent.name,
      run_name: created.sent.run_name,
      metadata: created.sent.metadata,
      status: 'completed',
      num_samples: 0,
      pinned_stats: [],
    });
    expect(await replay.read('GET', `/experiment/${uuid}/stats`)).toEqual({ parent_trace_stats: [] });
    expect(await replay.read('POST', `/experiment/${uuid}/trace_logs`, {})).toEqual([]);
  });

  it('fetches the deployed prompt with its template filled in', () => {
    const exchanges = replay.to('/deployed-prompt');
    if (client === 'typescript') return expect(exchanges).toEqual([]);
    expect(exchanges[0].body).toMatchObject({
      deployment_id: 'p-6_qJGbJHSNSB',
      version_number: 1,
      prompt: {
        raw_messages: [{ role: 'user', content: 'Say hello to {{name}}.' }],
        messages: [{ role: 'user', content: 'Say hello to ada.' }],
      },
    });
    expect(exchanges[0].body.functions.map((f: string) => JSON.parse(f))).toEqual([
      { name: 'wave', parameters: { type: 'object' } },
    ]);
  });

  it.skipIf(!existsSync(specFile(client)))('is the traffic captured in shared/spec/wire', () => {
    expect(readFileSync(wireFile(client), 'utf8')).toBe(readFileSync(specFile(client), 'utf8'));
  });

  it('can be replayed again against the same service, into a new organization', async () => {
    const again = new Replay(base, await organization(), file);
    await again.replay();
    expect(again.exchanges.map((e) => e.status)).toEqual(file.map(() => 200));
  });
});
