import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createSql } from '@sightline/db';
import { parseEnv, WorkerEnv } from '@sightline/schemas';
import { startWorkers } from '@sightline/worker';
import { FakeOpenAI } from '../fakes/fake-openai';
import { buildStack, call } from '../support/app';
import { userMessage } from '../support/gateway';
import { databaseUrl, newOrganization, redisUrl, testSql } from '../support/services';

// At a completion's deadline (its time budget, plus a second's grace) the API answers for a job that never
// started: "not called". A loaded worker can start a call in time and answer after that second; its
// caller must then hear what happened to the call, not that it was never made. The worker here reaches
// Redis through a proxy that holds every command 1.5 s, so its answer to a call that started comes late.

const DELAY_MS = 1500;

/** A TCP proxy to the run's Redis that delivers what clients send `DELAY_MS` late, in order. */
function slowProxy() {
  const target = new URL(redisUrl());
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => (client.destroy(), upstream.destroy()));
    }
    client.on('data', (bytes) => setTimeout(() => upstream.writable && upstream.write(bytes), DELAY_MS));
    upstream.pipe(client);
  });
  return {
    listen: () =>
      new Promise<string>((listening) =>
        server.listen(0, '127.0.0.1', () => listening(`redis://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const closing: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

describe('a completion whose call started before its deadline', () => {
  it("is answered with what happened to the call, even when the worker's answer comes after the grace", async () => {
    const openai = await new FakeOpenAI().start();
    closing.push(() => openai.stop());
    const env = {
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: 'sk-env-openai',
      // One attempt, bounded by the budget: the call runs until the deadline, 12 s after the request.
      COMPLETION_TIMEOUT_MS: '12000',
      PROVIDER_MAX_RETRIES: '0',
    };
    const stack = await buildStack({ worker: false, env });
    closing.push(() => stack.close());
    const proxy = slowProxy();
    closing.push(() => proxy.close());
    const slowRedis = new Redis(await proxy.listen(), { maxRetriesPerRequest: null });
    const sql = createSql(databaseUrl(), { max: 2 });
    const workerEnv = parseEnv(WorkerEnv, { ...env, DATABASE_URL: databaseUrl(), QUEUE_PREFIX: stack.prefix });
    const worker = startWorkers({
      sql,
      redis: slowRedis,
      env: workerEnv,
      log: pino({ level: 'silent' }),
      providerEnv: env,
    });
    closing.push(async () => {
      await worker.close({ redisAway: true });
      slowRedis.disconnect();
      await sql.end();
    });
    const orgSql = testSql();
    const { key } = await newOrganization(orgSql, 'deadline');
    await orgSql.end();

    // The provider sends its headers and then nothing: the call ends at the deadline, as a timeout.
    openai.plan({ stallAfterChunks: 0 });
    const sentAt = Date.now();
    const res = await call(stack.app, key, 'POST', '/completion', {
      llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage('hello')] },
    });
    expect(openai.requests).toHaveLength(1);
    expect(res.json()).toMatchObject({ status: 'error', error: expect.stringMatching(/timed out/) });
    expect(res.json().error).not.toMatch(/not called/);
    // The call ended at the caller's deadline, not later: the worker's late answer is its own slowness.
    expect(openai.requests[0]!.endedAt! - sentAt).toBeLessThan(12_000 + 1000);
  }, 60_000);
});

describe('a completion no worker took before its deadline', () => {
  it('is answered at its deadline as not called, waiting for a worker rather than for a provider limit', async () => {
    const openai = await new FakeOpenAI().start();
    closing.push(() => openai.stop());
    const stack = await buildStack({
      worker: false,
      env: { OPENAI_BASE_URL: openai.baseURL, COMPLETION_TIMEOUT_MS: '500', PROVIDER_MAX_RETRIES: '0' },
    });
    closing.push(() => stack.close());
    const orgSql = testSql();
    const { key } = await newOrganization(orgSql, 'no-worker');
    await orgSql.end();

    const res = await call(stack.app, key, 'POST', '/completion', {
      llm_configuration: { model: 'gpt-4o-mini', provider: 'openai', messages: [userMessage('anyone?')] },
    });
    expect(res.json()).toMatchObject({
      status: 'error',
      error: "not called: this request's time budget ran out while it waited for a worker",
      cost: 0,
    });
    expect(openai.requests).toHaveLength(0);
  });
});
