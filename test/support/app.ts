import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from '@sightline/api';
import { createSql } from '@sightline/db';
import { ApiEnv, parseEnv, WorkerEnv } from '@sightline/schemas';
import { startWorkers } from '@sightline/worker';
import { connectRedis } from '@sightline/runtime';
import { databaseUrl, redisEnv, redisUrl, replicaEnv, uniquePrefix } from './services';

export type StackOptions = { worker?: boolean; env?: Record<string, string | undefined>; workerLog?: Logger };

export type TestStack = {
  app: FastifyInstance;
  /** Its QUEUE_PREFIX. */
  prefix: string;
  /** The prefix of its keys in Redis: QUEUE_PREFIX, or a hash tag of it on a cluster. */
  keyPrefix: string;
  startWorker(): Promise<void>;
  /** Tasks the running worker's thread pool has finished. */
  workerPoolTasks(): number;
  stopWorker(): Promise<void>;
  close(): Promise<void>;
};

/**
 * The real API (via inject) and, when asked, the real span-write worker, both on the test database and a
 * queue prefix of their own. Tests that need to control delivery order leave the worker stopped.
 */
export async function buildStack(options: StackOptions = {}): Promise<TestStack> {
  const prefix = uniquePrefix();
  const env = {
    DATABASE_URL: databaseUrl(),
    ...replicaEnv(),
    ...redisEnv(),
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    // The app runs in the test's own process, so the event-loop guard would measure the tests' work (a
    // 10,000-span fixture, a collection of the runner's heap) and answer 503 at random. Its own tests
    // (test/overload/event-loop.int.test.ts) turn it on.
    MAX_EVENT_LOOP_DELAY_MS: '0',
    ...options.env,
  };
  const config = parseEnv(ApiEnv, env);
  const app = await buildApp(config);
  await app.ready();
  let worker: { close(): Promise<unknown>; release(): Promise<void>; poolTasks(): number } | null = null;

  const stack: TestStack = {
    app,
    prefix,
    keyPrefix: app.keyPrefix,
    async startWorker() {
      if (worker) return;
      const sql = createSql(env.DATABASE_URL, { max: 4 });
      const workerEnv = parseEnv(WorkerEnv, { WORKER_CONCURRENCY: '50', SPAN_BATCH_SIZE: '200', ...env });
      // The stack's own Redis or cluster, as a worker process opens it.
      const redis = connectRedis(workerEnv, { maxRetriesPerRequest: null });
      const running = startWorkers({
        sql,
        redis,
        env: workerEnv,
        log: options.workerLog ?? pino({ level: 'silent' }),
        providerEnv: env,
      });
      worker = {
        close: running.close,
        poolTasks: running.poolTasks,
        release: async () => void (await Promise.all([redis.quit(), sql.end()])),
      };
    },
    workerPoolTasks: () => worker?.poolTasks() ?? 0,
    async stopWorker() {
      if (!worker) return;
      await worker.close();
      await worker.release();
      worker = null;
    },
    async close() {
      await stack.stopWorker();
      await app.close();
    },
  };
  if (options.worker !== false) await stack.startWorker();
  return stack;
}

/** A JSON request to `/api/svc/v1{path}` through the real HTTP stack, with an API key (or none). */
export function call(
  app: FastifyInstance,
  key: string | null,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
) {
  return app.inject({
    method,
    url: `/api/svc/v1${path}`,
    headers: { ...(key && { 'x-api-key': key }), ...(body !== undefined && { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/**
 * GET /trace_log/{id}, asking again while it answers 503: under a loaded test machine the worker may
 * take longer than the API's 2 s read-your-writes bound. Tests of that bound itself use `call`.
 */
export async function readTrace(app: FastifyInstance, key: string, id: string) {
  for (let attempt = 0; ; attempt++) {
    const res = await call(app, key, 'GET', `/trace_log/${id}`);
    if (res.statusCode !== 503 || attempt >= 20) return res;
  }
}

/** The API with its log lines captured as parsed JSON. */
export async function appWithLogs(env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = parseEnv(ApiEnv, {
    DATABASE_URL: databaseUrl(),
    REDIS_URL: redisUrl(),
    QUEUE_PREFIX: uniquePrefix(),
    LOG_LEVEL: 'info',
    ...env,
  });
  const app = await buildApp(config, { logger: { level: 'info', stream } as never });
  await app.ready();
  return { app, lines };
}
