// The design's floor for a queued completion, as issue 39 defines it: an HTTP front that adds one BullMQ job a
// request and waits for its answer on Redis pub/sub, and a worker that takes the job, calls the upstream and
// publishes the answer. Nothing else: no validation, no limits, and with `--log=none` no log. The gateway
// benchmark runs it beside Sightline on the same Redis and upstream, so that Sightline's figures read against
// what the hop itself costs.
//
// The issue also requires each call's log, durable before its answer: `--log=rows` and `--log=spans` add the
// least that takes (gateway-floors.ts measures them). The worker puts the answer and the call's log entry in
// Redis in one transaction, then writes the logs finishing together in one PostgreSQL transaction and drops
// their entries: `rows` as one multi-row INSERT into `spans` (the database's own write, with the table's
// indexes and triggers), `spans` through Sightline's span writer (applySpanEvents).
//
//   queue-floor.ts front  --redis=<url> --prefix=<p> --port=<n>   prints {"port":n} once it listens
//   queue-floor.ts worker --redis=<url> --prefix=<p> --upstream=<base URL> --concurrency=<n>
//                         [--log=none|rows|spans --database=<url> --organization=<id> --project=<id>]
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createBatcher } from '@sightline/core';
import { applySpanEvents, createSql } from '@sightline/db';
import { spanCreateEvent } from '@sightline/queues';
import type { SpanEvent } from '@sightline/schemas';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    redis: { type: 'string' },
    prefix: { type: 'string' },
    port: { type: 'string', default: '0' },
    upstream: { type: 'string' },
    concurrency: { type: 'string', default: '100' },
    log: { type: 'string', default: 'none' },
    database: { type: 'string' },
    organization: { type: 'string' },
    project: { type: 'string' },
  },
});
const connection = () => new Redis(values.redis!, { maxRetriesPerRequest: null });
const prefix = values.prefix!;
type Call = { body: string; authorization: string; replyTo: string; id: string };
type Answer = {
  model: string;
  choices: { message: { content: string } }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
};

const ROW_COLUMNS = [
  'organization_id',
  'trace_id',
  'project_id',
  'root_trace_id',
  'parent_trace_id',
  'created',
  'depth',
  'execution_order',
  'trace_name',
  'configuration',
  'output',
  'start_ts',
  'end_ts',
  'latency',
  'status',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cost',
  'trace_cost',
  'trace_tokens',
  'search_words',
] as const;
// As Sightline's span writer sends its rows: one JSON document a statement (span-writes.ts).
const ROWS_INSERT = `insert into spans (${ROW_COLUMNS.join(', ')})
  select ${ROW_COLUMNS.join(', ')} from jsonb_populate_recordset(null::spans, $1::text::jsonb)`;

/** Writes the logs of the calls answered, in batches; resolves once the call's log is in PostgreSQL. */
function logWriter(redis: Redis, mode: string) {
  const sql = createSql(values.database!, { max: 4 });
  const journal = `${prefix}:journal`;
  let seq = 0;
  const batcher = createBatcher<SpanEvent>(
    async (events) => {
      if (mode === 'spans') await applySpanEvents(sql, events);
      else await sql.unsafe(ROWS_INSERT, [JSON.stringify(events.map(spanRow))], { prepare: true });
      await redis.hdel(journal, ...events.map((e) => e.trace_id));
    },
    { maxItems: 200, lingerMs: 0 },
  );
  return {
    /** Answers the call with its log entry in the same Redis transaction. */
    answer: async (call: Call, text: string, startedAt: Date) => {
      const event = { ...callEvent(call, JSON.parse(text) as Answer, startedAt), seq: seq++ };
      await redis
        .multi()
        .hset(journal, event.trace_id, JSON.stringify(event))
        .publish(call.replyTo, `${call.id}\n${text}`)
        .exec();
      return batcher.add([event]);
    },
  };
}

/** A call's log as the gateway makes it (apps/worker/src/gateway/span.ts): the request and its answer. */
function callEvent(call: Call, answer: Answer, startedAt: Date): Omit<SpanEvent, 'seq'> {
  const ended = new Date();
  const request = JSON.parse(call.body) as { messages: unknown[] };
  return spanCreateEvent({
    organization_id: values.organization!,
    trace_id: randomUUID(),
    project_id: values.project!,
    fields: {
      trace_name: 'floor',
      configuration: { model: answer.model, provider: 'openai', model_params: {}, messages: request.messages },
      inputs: null,
      output: answer.choices[0].message.content,
      start_timestamp: startedAt.toISOString(),
      end_timestamp: ended.toISOString(),
      latency: (ended.getTime() - startedAt.getTime()) / 1000,
      input_tokens: answer.usage.prompt_tokens,
      output_tokens: answer.usage.completion_tokens,
      total_tokens: answer.usage.total_tokens,
      cost: answer.usage.total_tokens * 1e-7,
      status: 'success',
      cache_hit: false,
    },
  });
}

/** The event as a row of `spans`, with the columns the listing and the trace read. */
function spanRow(event: SpanEvent): Record<(typeof ROW_COLUMNS)[number], unknown> {
  const f = event.fields as Record<string, unknown>;
  return {
    organization_id: event.organization_id,
    trace_id: event.trace_id,
    project_id: f.project_id,
    root_trace_id: f.root_trace_id,
    parent_trace_id: f.parent_trace_id,
    created: true,
    depth: 0,
    execution_order: 0,
    trace_name: f.trace_name,
    configuration: f.configuration,
    output: f.output,
    start_ts: f.start_timestamp,
    end_ts: f.end_timestamp,
    latency: f.latency,
    status: f.status,
    input_tokens: f.input_tokens,
    output_tokens: f.output_tokens,
    total_tokens: f.total_tokens,
    cost: f.cost,
    trace_cost: f.cost,
    trace_tokens: f.total_tokens,
    search_words: String(f.output).toLowerCase().split(/\W+/).filter(Boolean),
  };
}

if (positionals[0] === 'front') {
  const replyTo = `${prefix}:replies:${randomUUID()}`;
  const waiting = new Map<string, (answer: string) => void>();
  const subscriber = connection();
  await subscriber.subscribe(replyTo);
  subscriber.on('message', (_channel, message: string) => {
    const split = message.indexOf('\n');
    waiting.get(message.slice(0, split))?.(message.slice(split + 1));
  });
  const queue = new Queue<Call>('call', { connection: connection(), prefix });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = randomUUID();
      waiting.set(id, (answer) => {
        waiting.delete(id);
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      });
      const call = {
        body: Buffer.concat(chunks).toString(),
        authorization: req.headers.authorization ?? '',
        replyTo,
        id,
      };
      queue.add('call', call, { removeOnComplete: true, removeOnFail: true }).catch((err: Error) => {
        waiting.delete(id);
        res.writeHead(503).end(err.message);
      });
    });
  });
  server.listen(Number(values.port), '127.0.0.1', () => {
    const address = server.address();
    console.log(JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 }));
  });
} else if (positionals[0] === 'worker') {
  const publisher = connection();
  const log = values.log === 'none' ? null : logWriter(publisher, values.log!);
  // As the gateway's worker: a job ends at its answer, and waits for its log only past 1,000 unwritten.
  let unwritten = 0;
  const worker = new Worker<Call>(
    'call',
    async ({ data }) => {
      const startedAt = new Date();
      const res = await fetch(`${values.upstream}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: data.authorization },
        body: data.body,
      });
      const text = await res.text();
      if (!log) return void (await publisher.publish(data.replyTo, `${data.id}\n${text}`));
      unwritten++;
      const written = log.answer(data, text, startedAt).finally(() => unwritten--);
      if (unwritten > 1000) await written;
      else written.catch((err: Error) => console.error(`a log was not written: ${err.message}`));
    },
    { connection: connection(), prefix, concurrency: Number(values.concurrency) },
  );
  await worker.waitUntilReady();
  console.log(JSON.stringify({ ready: true }));
} else {
  throw new Error(`queue-floor.ts: the role is front or worker, not ${positionals[0]}`);
}
