// A fake OpenAI chat-completions upstream for benchmarks, run as its own process so that its work is
// not charged to the gateway under test or to the load generator. Every answer waits a fixed delay
// (the provider's "thinking"), then answers in OpenAI's wire format: JSON, or SSE with the usage chunk
// when `stream_options.include_usage` is set. Its only state is a request counter.
//
//   node --import tsx scripts/bench/lib/fake-openai-upstream.ts [--port=0] [--delay-ms=20] [--chunks=8] [--chunk-gap-ms=2]
//     [--fail-every=0] [--admit=0] [--retry-after=1]
//
// `--fail-every=N` (N > 0): every Nth call answers 500 after the same delay, as a provider failing part of
// its calls does; `failed` counts them.
// `--admit=N` (N > 0): a provider's concurrency limit: a call that arrives while N are being answered is
// refused at once with 429 and `Retry-After: <--retry-after>` (seconds); `refused` counts them, and
// `max_in_flight` is the most calls ever answered at once.
// Prints one JSON line `{"port":N}` on stdout once it listens; `GET /stats` answers the counters.
// `POST /stats/reset` starts `max_in_flight` again.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'delay-ms': { type: 'string', default: '20' },
    chunks: { type: 'string', default: '8' },
    'chunk-gap-ms': { type: 'string', default: '2' },
    'fail-every': { type: 'string', default: '0' },
    admit: { type: 'string', default: '0' },
    'retry-after': { type: 'string', default: '1' },
  },
});
const DELAY_MS = Number(values['delay-ms']);
const CHUNKS = Math.max(1, Number(values.chunks));
const CHUNK_GAP_MS = Number(values['chunk-gap-ms']);
const FAIL_EVERY = Number(values['fail-every']);
const ADMIT = Number(values.admit);
const RETRY_AFTER = values['retry-after'];

const stats = { requests: 0, streamed: 0, bad: 0, failed: 0, refused: 0, max_in_flight: 0 };
let inFlight = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const WORDS = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog ', 'again '];

type ChatRequest = {
  model?: string;
  messages?: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
};

async function handle(req: IncomingMessage, res: ServerResponse) {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  // The most calls at once since the last reset (`max_in_flight` of one measured run).
  if (req.method === 'POST' && req.url === '/stats/reset') {
    stats.max_in_flight = inFlight;
    res.writeHead(204).end();
    return;
  }
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  let body: ChatRequest;
  try {
    body = JSON.parse(Buffer.concat(parts).toString('utf8')) as ChatRequest;
  } catch {
    body = {};
  }
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions') || !Array.isArray(body.messages)) {
    stats.bad++;
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { type: 'invalid_request_error', message: `no route ${req.method} ${req.url}` } }));
    return;
  }
  if (ADMIT > 0 && inFlight >= ADMIT) {
    stats.refused++;
    res
      .writeHead(429, { 'content-type': 'application/json', 'retry-after': RETRY_AFTER })
      .end(JSON.stringify({ error: { type: 'rate_limit_error', message: 'Too many concurrent requests' } }));
    return;
  }
  inFlight++;
  stats.max_in_flight = Math.max(stats.max_in_flight, inFlight);
  try {
    await answer({ ...body, messages: body.messages }, res);
  } finally {
    inFlight--;
  }
}

async function answer(body: ChatRequest & { messages: unknown[] }, res: ServerResponse) {
  stats.requests++;
  const model = body.model ?? 'gpt-4o-mini';
  const pieces = Array.from({ length: CHUNKS }, (_, i) => WORDS[i % WORDS.length]);
  const usage = {
    prompt_tokens: 9 * body.messages.length,
    completion_tokens: pieces.length,
    total_tokens: 9 * body.messages.length + pieces.length,
  };
  const base = {
    id: `chatcmpl-bench${stats.requests}`,
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_bench',
  };
  await sleep(DELAY_MS);
  if (FAIL_EVERY > 0 && stats.requests % FAIL_EVERY === 0) {
    stats.failed++;
    res
      .writeHead(500, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { type: 'server_error', message: 'planned failure' } }));
    return;
  }
  if (!body.stream) {
    const message = { role: 'assistant', content: pieces.join(''), refusal: null };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }],
        usage,
      }),
    );
    return;
  }
  stats.streamed++;
  const event = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  const delta = (d: object, finish: string | null = null) =>
    event([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  // The role chunk and the first token leave together, as OpenAI sends them: the first token is due at DELAY_MS.
  res.write(delta({ role: 'assistant', content: '', refusal: null }) + delta({ content: pieces[0] }));
  for (const piece of pieces.slice(1)) {
    if (CHUNK_GAP_MS > 0) await sleep(CHUNK_GAP_MS);
    res.write(delta({ content: piece }));
  }
  res.write(delta({}, 'stop'));
  if (body.stream_options?.include_usage) res.write(event([], { usage }));
  res.end('data: [DONE]\n\n');
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: Error) => {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'server_error', message: err.message } }));
  });
});
// Gateways and load generators keep connections open between requests, as they do with the real API.
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
});
const stop = () => server.close(() => process.exit(0)).closeAllConnections();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
