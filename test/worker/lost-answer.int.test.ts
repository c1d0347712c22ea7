import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { queues } from '@sightline/queues';
import { parseEnv, WorkerEnv } from '@sightline/schemas';
import { registerWorker } from '../../apps/worker/src/register-worker';
import { databaseUrl, redisUrl, uniquePrefix } from '../support/services';

// Redis that stops while a worker ends a job can run the worker's command and never send the answer:
// ioredis sends the command again on reconnecting, and finds the job it ended already gone. The worker
// says so once, as a warning that tells why, not as a worker error; the job is not run again.

/** A TCP proxy to the run's Redis that can drop Redis's answers, then cut every connection. */
function answerDroppingProxy() {
  const target = new URL(redisUrl());
  const sockets = new Set<Socket>();
  let dropping = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (bytes) => upstream.write(bytes));
    upstream.on('data', (bytes) => dropping || client.write(bytes));
  });
  return {
    listen: () =>
      new Promise<string>((listening) =>
        server.listen(0, '127.0.0.1', () => listening(`redis://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    dropAnswers: () => void (dropping = true),
    /** Ends every connection, as Redis does when it stops, and lets the next ones through whole. */
    cut: () => {
      for (const socket of sockets) socket.destroy();
      dropping = false;
    },
    close: () => server.close(),
  };
}

type Line = { level: number; msg: string; jobId?: string; queue?: string };
const lines: Line[] = [];
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  }),
);

const proxy = answerDroppingProxy();
const direct = new Redis(redisUrl(), { maxRetriesPerRequest: null });
afterAll(async () => {
  proxy.close();
  await direct.quit();
});

describe('a job ended as Redis stops', () => {
  it('is reported once as gone, not as a worker error, and not run again', async () => {
    const prefix = uniquePrefix('lost-answer');
    const viaProxy = new Redis(await proxy.listen(), { maxRetriesPerRequest: null });
    const env = parseEnv(WorkerEnv, { DATABASE_URL: databaseUrl(), REDIS_URL: redisUrl() });
    let runs = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const worker = registerWorker(
      'statistics',
      async () => {
        runs++;
        started();
        await ended;
      },
      { connection: viaProxy, prefix, env, log },
    );
    const queue = new Queue('statistics', { connection: direct, prefix });
    try {
      const job = await queue.add('statistics', { min_changed_rows: 1 }, queues.statistics.options);
      await running;
      proxy.dropAnswers();
      end();
      // Redis ends the job (and removes it, as its options ask) while the worker hears nothing back.
      await expect.poll(() => direct.exists(`${prefix}:statistics:${job.id}`), { timeout: 10_000 }).toBe(0);
      proxy.cut();

      await expect.poll(() => lines.filter((line) => line.jobId === job.id).length, { timeout: 15_000 }).toBe(1);
      const gone = lines.find((line) => line.jobId === job.id)!;
      expect(gone).toMatchObject({ level: 40, queue: 'statistics' });
      expect(gone.msg).toMatch(/no longer in Redis: it was ended before the connection dropped/);
      // The worker has taken up its work again, and runs the next job.
      await queue.add('statistics', { min_changed_rows: 1 }, queues.statistics.options);
      await expect.poll(() => runs, { timeout: 10_000 }).toBe(2);
      expect(lines.filter((line) => line.msg === 'worker error')).toEqual([]);
      expect(lines.filter((line) => line.jobId === job.id)).toHaveLength(1);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await viaProxy.quit();
    }
  }, 40_000);
});
