import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../fakes/fake-server';
import { call, readTrace } from '../support/app';
import { useGateway } from '../support/fixtures';
import { userMessage } from '../support/gateway';

const {
  gw,
  orgs: [{ key }],
} = useGateway({ orgs: ['org'] });
let port: number;

beforeAll(async () => {
  gw.openai.chunkDelayMs = 20;
  gw.anthropic.chunkDelayMs = 20;
  await gw.stack.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.stack.app.server.address() as { port: number }).port;
});

type Streamed = { status: number; contentType: string; networkChunks: string[] };

/** Posts to the stream endpoint over real HTTP and keeps each network chunk as it arrived. */
function stream(body: object, options: { abortAfterChunks?: number } = {}): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/api/svc/v1/completion/stream',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
      },
      (res) => {
        const networkChunks: string[] = [];
        const done = () =>
          resolve({ status: res.statusCode!, contentType: String(res.headers['content-type']), networkChunks });
        res.on('data', (d: Buffer) => {
          networkChunks.push(d.toString());
          if (options.abortAfterChunks && networkChunks.length >= options.abortAfterChunks) {
            req.destroy();
            done();
          }
        });
        res.on('end', done);
      },
    );
    req.on('error', (err) => (options.abortAfterChunks ? undefined : reject(err)));
    req.end(JSON.stringify(body));
  });
}

/** The reference Python client's rule: per network chunk, split on CRLF, take the first `data:` line. */
function referenceClientRead(networkChunks: string[]): { chunks: string[]; payloads: any[] } {
  const chunks: string[] = [],
    payloads: any[] = [];
  for (const networkChunk of networkChunks) {
    const line = networkChunk.split('\r\n').find((l) => l.startsWith('data:'));
    if (!line) continue;
    const rest = line.replace(/^data: /, '');
    if (rest.startsWith('ID_START')) continue;
    const payload = JSON.parse(rest);
    payloads.push(payload);
    chunks.push(payload.chunk);
  }
  return { chunks, payloads };
}

/** A standard SSE reading: events are separated by blank lines. */
function sseEvents(networkChunks: string[]): any[] {
  return networkChunks
    .join('')
    .split(/\r?\n\r?\n/)
    .filter(Boolean)
    .map((event) => {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      return JSON.parse(data);
    });
}

const config = (content: string) => ({ model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage(content)] });

describe('POST /completion/stream', () => {
  it('relays the provider chunks in order, one event per write, then the whole response', async () => {
    const trace_id = randomUUID();
    const res = await stream({ trace_id, llm_configuration: config('one two three four five') });
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/text\/event-stream/);
    const { chunks, payloads } = referenceClientRead(res.networkChunks);
    expect(chunks).toEqual(['echo: ', 'one ', 'two ', 'three ', 'four ', 'five', '']);
    expect(sseEvents(res.networkChunks)).toEqual(payloads);
    const final = payloads.at(-1);
    expect(final).toMatchObject({
      chunk: '',
      content: 'echo: one two three four five',
      trace_id,
      inference_id: trace_id,
      status: 'success',
      cache_hit: false,
      input_tokens: 7,
      output_tokens: 6,
      total_tokens: 13,
    });
    expect(final.cost).toBeGreaterThan(0);
    expect(final.latency).toBeGreaterThan(0);
    const log = (await readTrace(gw.stack.app, key, trace_id)).json();
    expect(log).toMatchObject({
      output: 'echo: one two three four five',
      status: 'success',
      input_tokens: 7,
      output_tokens: 6,
    });
    expect(log.time_to_first_token).toBeGreaterThan(0);
    expect(log.time_to_first_token).toBeLessThan(log.latency);
    expect(gw.openai.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('keeps two concurrent streams apart', async () => {
    const [a, b] = await Promise.all([
      stream({ llm_configuration: config('alpha beta gamma delta') }),
      stream({ llm_configuration: config('uno dos tres cuatro') }),
    ]);
    expect(referenceClientRead(a.networkChunks).chunks.join('')).toBe('echo: alpha beta gamma delta');
    expect(referenceClientRead(b.networkChunks).chunks.join('')).toBe('echo: uno dos tres cuatro');
  });

  it('streams from Anthropic with its usage', async () => {
    const res = await stream({
      llm_configuration: {
        model: 'claude-3-5-haiku-latest',
        provider: 'anthropic',
        messages: [userMessage('hola mundo')],
      },
    });
    const { chunks, payloads } = referenceClientRead(res.networkChunks);
    expect(chunks.join('')).toBe('echo: hola mundo');
    expect(payloads.at(-1)).toMatchObject({
      provider: 'anthropic',
      input_tokens: 9,
      output_tokens: 3,
      status: 'success',
    });
  });

  it('finishes and logs the completion when the client goes away mid-stream', async () => {
    const trace_id = randomUUID();
    await stream({ trace_id, llm_configuration: config('a b c d e f g h i j k l') }, { abortAfterChunks: 2 });
    let log;
    for (let i = 0; i < 50 && !log; i++) {
      const res = await readTrace(gw.stack.app, key, trace_id);
      if (res.statusCode === 200) log = res.json();
      else await sleep(100);
    }
    expect(log).toMatchObject({ status: 'success', output: 'echo: a b c d e f g h i j k l' });
  });

  it('ends a broken provider stream with an error event and an error log', async () => {
    gw.openai.plan({ breakAfterChunks: 3 });
    const trace_id = randomUUID();
    const res = await stream({ trace_id, llm_configuration: config('this stream will break') });
    const final = referenceClientRead(res.networkChunks).payloads.at(-1);
    expect(final).toMatchObject({ status: 'error', trace_id });
    expect((await readTrace(gw.stack.app, key, trace_id)).json()).toMatchObject({ status: 'error' });
  });

  it('ends a provider stream that stalls with an error event, within the idle timeout', async () => {
    gw.openai.plan({ stallAfterChunks: 2 });
    const started = Date.now();
    const final = referenceClientRead(
      (await stream({ llm_configuration: config('this one stalls') })).networkChunks,
    ).payloads.at(-1);
    expect(final).toMatchObject({ status: 'error', error: expect.stringMatching(/timed out/) });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('streams a function call from Anthropic as the JSON of the call', async () => {
    gw.anthropic.plan({ toolUse: true });
    const res = await stream({
      llm_configuration: {
        model: 'claude-3-5-haiku-latest',
        provider: 'anthropic',
        messages: [userMessage('weather?')],
        functions: [{ name: 'get_weather' }],
      },
    });
    const { chunks } = referenceClientRead(res.networkChunks);
    expect(JSON.parse(chunks.join(''))).toEqual([{ name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  });

  it('streams a cached completion as a cache hit', async () => {
    const body = { llm_configuration: config(`cached stream ${randomUUID()}`), cache: true };
    await stream(body);
    const before = gw.openai.requests.length;
    const { chunks, payloads } = referenceClientRead((await stream(body)).networkChunks);
    expect(chunks.join('')).toMatch(/^echo: cached stream/);
    expect(payloads.at(-1)).toMatchObject({ cache_hit: true, cost: 0 });
    expect(gw.openai.requests.length).toBe(before);
  });

  it('answers a bad request with a JSON 422 before any stream starts', async () => {
    const res = await stream({ llm_configuration: config('{{missing}}') });
    expect(res.status).toBe(422);
    expect(JSON.parse(res.networkChunks.join('')).detail[0].loc).toEqual(['body', 'inputs', 'missing']);
  });
  describe('through a fallback route', () => {
    const routed = (content: string) => ({
      llm_configuration: { model: 'route:streamed', messages: [userMessage(content)] },
    });
    beforeAll(async () => {
      const res = await call(gw.stack.app, key, 'POST', '/routes', {
        name: 'streamed',
        strategy: 'fallback',
        targets: [
          { provider: 'openai', model: 'gpt-4o-mini' },
          { provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
        ],
      });
      expect(res.statusCode).toBe(200);
    });

    it('moves on to the next target when the first fails before its first chunk', async () => {
      gw.openai.plan({ status: 503 });
      const { chunks, payloads } = referenceClientRead((await stream(routed('one two'))).networkChunks);
      expect(chunks.join('')).toBe('echo: one two');
      expect(payloads.at(-1)).toMatchObject({ status: 'success', provider: 'anthropic' });
    });

    it('ends the stream with an error, and tries nothing else, when a target fails after its first chunk', async () => {
      // A stall is a timeout, which the route moves on from before any chunk: here it must not.
      gw.openai.plan({ stallAfterChunks: 3 });
      const before = gw.anthropic.requests.length;
      const { chunks, payloads } = referenceClientRead((await stream(routed('a b c d e f'))).networkChunks);
      expect(chunks.join('')).toMatch(/^echo: a /);
      expect(payloads.at(-1)).toMatchObject({
        status: 'error',
        provider: 'openai',
        error: expect.stringMatching(/timed out/),
      });
      expect(gw.anthropic.requests).toHaveLength(before);
    });
  });
});
