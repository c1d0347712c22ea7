// The design's floor for a queued completion, as issue 39 defines it: an HTTP front that adds one BullMQ job a
// request and waits for its answer on Redis pub/sub, and a worker that takes the job, calls the upstream and
// publishes the answer. Nothing else: no validation, no log, no limits. The gateway benchmark runs it beside
// Sightline on the same Redis and upstream, so that Sightline's figures read against what the hop itself costs.
//
//   queue-floor.ts front  --redis=<url> --prefix=<p> --port=<n>   prints {"port":n} once it listens
//   queue-floor.ts worker --redis=<url> --prefix=<p> --upstream=<base URL> --concurrency=<n>
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    redis: { type: 'string' },
    prefix: { type: 'string' },
    port: { type: 'string', default: '0' },
    upstream: { type: 'string' },
    concurrency: { type: 'string', default: '100' },
  },
});
const connection = () => new Redis(values.redis!, { maxRetriesPerRequest: null });
const prefix = values.prefix!;
type Call = { body: string; authorization: string; replyTo: string; id: string };

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
  const worker = new Worker<Call>(
    'call',
    async ({ data }) => {
      const res = await fetch(`${values.upstream}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: data.authorization },
        body: data.body,
      });
      await publisher.publish(data.replyTo, `${data.id}\n${await res.text()}`);
    },
    { connection: connection(), prefix, concurrency: Number(values.concurrency) },
  );
  await worker.waitUntilReady();
  console.log(JSON.stringify({ ready: true }));
} else {
  throw new Error(`queue-floor.ts: the role is front or worker, not ${positionals[0]}`);
}
