import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { InjectOptions } from 'fastify';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOtlpGrpc, type OtlpGrpcServer } from '@sightline/api/otlp-grpc';
import { call, readTrace, type TestStack } from '../support/app';
import { useStack } from '../support/fixtures';
import { freePort, startScript } from '../support/processes';
import { databaseUrl, redisUrl, testRedis, uniquePrefix } from '../support/services';
import {
  decodeExportResponse,
  otlpJson,
  otlpProtobuf,
  spanIdHex,
  traceIdHex,
  uuidOfHex as uuid,
  type SpanSpec,
} from '../support/otlp';

// OTLP/gRPC as an OpenTelemetry Collector's exporter sends it: the protobuf request, gzip, the key and the
// project as metadata, over a real HTTP/2 connection to the trace service. (The SDK's own gRPC exporter is
// in clients.int.test.ts, beside the HTTP ones.)

const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const GZIP = 2; // grpc-js's compression algorithm numbers: 0 none, 1 deflate, 2 gzip

type Answer = { error: grpc.ServiceError | null; response?: Buffer };

/** A Collector-shaped client: one channel, gzip on every message, its user agent. */
function collector(port: number, compression = GZIP) {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.default_compression_algorithm': compression,
    'grpc.primary_user_agent': 'OpenTelemetry Collector Contrib/0.140.0',
  });
  return {
    export(body: Buffer, headers: Record<string, string>): Promise<Answer> {
      const metadata = new grpc.Metadata();
      for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
      return new Promise((resolve) =>
        client.makeUnaryRequest(
          EXPORT,
          (b: Buffer) => b,
          (b: Buffer) => b,
          body,
          metadata,
          (error, response) => resolve({ error, response }),
        ),
      );
    },
    close: () => client.close(),
  };
}

type Tree = { trace_name: string; project_name: string; children: Tree[] };

function twoSpans(): { traceId: string; spans: SpanSpec[] } {
  const traceId = traceIdHex();
  const root = spanIdHex();
  return {
    traceId,
    spans: [
      { traceId, spanId: root, name: 'collected' },
      { traceId, spanId: spanIdHex(), parentSpanId: root, name: 'child' },
    ],
  };
}

/** The google.rpc.RetryInfo delay (seconds) in an error's `grpc-status-details-bin`. */
function retryDelayOf(error: grpc.ServiceError): number | undefined {
  const [details] = error.metadata.get('grpc-status-details-bin');
  if (!Buffer.isBuffer(details)) return undefined;
  const root = protobuf.parse(
    `syntax = "proto3";
    message Any { string type_url = 1; bytes value = 2; }
    message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
    message Duration { int64 seconds = 1; int32 nanos = 2; }
    message RetryInfo { Duration retry_delay = 1; }`,
    { keepCase: true },
  ).root;
  const status = root.lookupType('Status').toObject(root.lookupType('Status').decode(details)) as {
    details: { type_url: string; value: Uint8Array }[];
  };
  const retry = status.details.find((d) => d.type_url.endsWith('google.rpc.RetryInfo'));
  if (!retry) return undefined;
  const info = root.lookupType('RetryInfo').toObject(root.lookupType('RetryInfo').decode(retry.value), {
    longs: Number,
  }) as { retry_delay: { seconds: number } };
  return info.retry_delay.seconds;
}

function serving(stack: () => TestStack) {
  const state = {} as { server: OtlpGrpcServer; client: ReturnType<typeof collector> };
  beforeAll(async () => {
    state.server = await serveOtlpGrpc(stack().app, '127.0.0.1', 0);
    state.client = collector(state.server.port);
  });
  afterAll(async () => {
    state.client.close();
    await state.server.close(1000);
  });
  return state;
}

describe('OTLP/gRPC trace service', () => {
  const LIMIT = 1024 * 1024;
  const {
    stack,
    orgs: [org],
  } = useStack({ orgs: ['otel-grpc'], env: { OTLP_BODY_LIMIT_BYTES: String(LIMIT) } });
  const grpcOf = serving(() => stack);

  it('stores what a Collector sends (gzip, x-api-key and x-project-name metadata) as the HTTP intake does', async () => {
    const { traceId, spans } = twoSpans();
    const project = `otel-grpc-${randomUUID()}`;
    const { error, response } = await grpcOf.client.export(otlpProtobuf(otlpJson(spans)), {
      'x-api-key': org.key,
      'x-project-name': project,
    });
    expect(error).toBeNull();
    expect(decodeExportResponse(response!).partialSuccess).toBeUndefined();
    const tree = (await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree;
    expect(tree).toMatchObject({ trace_name: 'collected', project_name: project });
    expect(tree.children.map((c) => c.trace_name)).toEqual(['child']);
  });

  it('takes the project from the resource without metadata, and the key as a Bearer token, uncompressed too', async () => {
    const { traceId, spans } = twoSpans();
    const project = `otel-grpc-resource-${randomUUID()}`;
    const plain = collector(grpcOf.server.port, 0);
    try {
      const { error } = await plain.export(otlpProtobuf(otlpJson(spans, { 'service.name': project })), {
        authorization: `Bearer ${org.key}`,
      });
      expect(error).toBeNull();
    } finally {
      plain.close();
    }
    expect((await readTrace(stack.app, org.key, uuid(traceId))).json()).toMatchObject({ project_name: project });
  });

  it('reports a span it cannot take in partial_success and stores the others', async () => {
    const { traceId, spans } = twoSpans();
    const bad: SpanSpec = { traceId: traceIdHex(), spanId: 'abcdef', name: 'bad id' };
    const { error, response } = await grpcOf.client.export(otlpProtobuf(otlpJson([...spans, bad])), {
      'x-api-key': org.key,
    });
    expect(error).toBeNull();
    expect(decodeExportResponse(response!).partialSuccess).toEqual({
      rejectedSpans: '1',
      errorMessage: expect.stringContaining('spanId must be 8 bytes'),
    });
    expect(((await readTrace(stack.app, org.key, uuid(traceId))).json() as Tree).children).toHaveLength(1);
  });

  it('answers UNAUTHENTICATED without a valid key and PERMISSION_DENIED to a viewer, storing nothing', async () => {
    const { traceId, spans } = twoSpans();
    const body = otlpProtobuf(otlpJson(spans));
    const none = await grpcOf.client.export(body, {});
    expect(none.error).toMatchObject({ code: grpc.status.UNAUTHENTICATED, details: expect.stringMatching(/Bearer/) });
    const wrong = await grpcOf.client.export(body, { authorization: 'Bearer sl-not-a-key' });
    expect(wrong.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const viewer = (
      await call(stack.app, org.key, 'POST', '/api-keys', { role: 'viewer', label: 'grpc-viewer' })
    ).json();
    const denied = await grpcOf.client.export(body, { 'x-api-key': viewer.key });
    expect(denied.error?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await readTrace(stack.app, org.key, uuid(traceId))).statusCode).toBe(404);
  });

  it('answers INVALID_ARGUMENT to bytes that are not an ExportTraceServiceRequest', async () => {
    const truncated = otlpProtobuf(otlpJson(twoSpans().spans)).subarray(0, 40);
    const { error } = await grpcOf.client.export(truncated, { 'x-api-key': org.key });
    expect(error).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringContaining('not an OTLP ExportTraceServiceRequest'),
    });
  });

  it('answers RESOURCE_EXHAUSTED to a message past the limit, however small it is compressed', async () => {
    const { traceId, spans } = twoSpans();
    spans[0].attributes = { 'input.value': 'z'.repeat(LIMIT) };
    const body = otlpProtobuf(otlpJson(spans));
    for (const compression of [0, GZIP]) {
      const client = collector(grpcOf.server.port, compression);
      try {
        const { error } = await client.export(body, { 'x-api-key': org.key });
        expect(error?.code, `compression ${compression}`).toBe(grpc.status.RESOURCE_EXHAUSTED);
      } finally {
        client.close();
      }
    }
    expect((await readTrace(stack.app, org.key, uuid(traceId))).statusCode).toBe(404);
  });
});

describe('OTLP/gRPC under a full span backlog', () => {
  const {
    stack,
    orgs: [org],
  } = useStack({ worker: false, env: { SPAN_BACKLOG_LIMIT: '2' }, orgs: ['otel-grpc-backlog'] });
  const grpcOf = serving(() => stack);

  it('answers UNAVAILABLE, which exporters retry, with the intake’s Retry-After as RetryInfo', async () => {
    const first = await grpcOf.client.export(otlpProtobuf(otlpJson(twoSpans().spans)), { 'x-api-key': org.key });
    expect(first.error).toBeNull();
    const { traceId, spans } = twoSpans();
    const { error } = await grpcOf.client.export(otlpProtobuf(otlpJson(spans)), { 'x-api-key': org.key });
    expect(error).toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringContaining('retry later') });
    expect(retryDelayOf(error!)).toBe(5);
    expect((await readTrace(stack.app, org.key, uuid(traceId))).statusCode).toBe(404);
  });
});

describe('OTLP/gRPC closing with an export under way', () => {
  const {
    stack,
    orgs: [org],
  } = useStack({ orgs: ['otel-grpc-close'] });

  /**
   * The gRPC service over the real app, whose intake waits for `release` once it has a call: an export held
   * under way while the service closes.
   */
  async function heldService() {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const underWay = new Promise<void>((resolve) => (entered = resolve));
    const app = stack.app;
    const held = Object.create(app, {
      inject: {
        value: async (opts: InjectOptions) => {
          entered();
          await released;
          return app.inject(opts);
        },
      },
    }) as typeof app;
    const server = await serveOtlpGrpc(held, '127.0.0.1', 0);
    return { server, client: collector(server.port), underWay, release };
  }

  it('finishes an export under way before it closes, and refuses new ones meanwhile', async () => {
    const { server, client, underWay, release } = await heldService();
    try {
      const { traceId, spans } = twoSpans();
      const exporting = client.export(otlpProtobuf(otlpJson(spans)), {
        'x-api-key': org.key,
        'x-project-name': 'grpc-close',
      });
      await underWay;
      let closed = false;
      const closing = server.close(10_000).then(() => (closed = true));
      // A second channel: the first one's connection is being drained.
      const late = collector(server.port);
      expect((await late.export(otlpProtobuf(otlpJson(twoSpans().spans)), { 'x-api-key': org.key })).error?.code).toBe(
        grpc.status.UNAVAILABLE,
      );
      late.close();
      expect(closed).toBe(false);
      release();
      expect((await exporting).error).toBeNull();
      await closing;
      await expect
        .poll(async () => (await readTrace(stack.app, org.key, uuid(traceId))).statusCode, { timeout: 10_000 })
        .toBe(200);
    } finally {
      release();
      client.close();
    }
  });

  it('cuts an export still under way at the end of its grace', async () => {
    const { server, client, underWay, release } = await heldService();
    try {
      const exporting = client.export(otlpProtobuf(otlpJson(twoSpans().spans)), { 'x-api-key': org.key });
      await underWay;
      const t0 = Date.now();
      await server.close(300);
      expect(Date.now() - t0).toBeLessThan(5000);
      // Cut, not answered: the Collector sends it again elsewhere.
      expect((await exporting).error?.code).toBeOneOf([grpc.status.CANCELLED, grpc.status.UNAVAILABLE]);
    } finally {
      release();
      client.close();
    }
  });
});

describe('OTLP/gRPC when npm start stops', () => {
  it('keeps serving while the API drains, exits cleanly with a Collector still connected, and keeps what it took', async () => {
    const prefix = uniquePrefix('grpc-stop');
    const [port, grpcPort] = [await freePort(), await freePort()];
    const { child } = await startScript(
      'scripts/start.ts',
      {
        DATABASE_URL: databaseUrl(),
        REDIS_URL: redisUrl(),
        LOG_LEVEL: 'info',
        START_ROLE: 'api',
        API_PROCESSES: '1',
        PORT: String(port),
        OTLP_GRPC_PORT: String(grpcPort),
        QUEUE_PREFIX: prefix,
        BOOTSTRAP_API_KEY: 'sl-grpc-stop-key',
        SHUTDOWN_DELAY_MS: '1500',
      },
      /OTLP\/gRPC traces on/,
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const client = collector(grpcPort);
    const redis = testRedis();
    try {
      const send = () =>
        client.export(otlpProtobuf(otlpJson(twoSpans().spans)), {
          'x-api-key': 'sl-grpc-stop-key',
          'x-project-name': 'grpc-stop',
        });
      const queued = () => redis.llen(`${prefix}:span-write:wait`); // no worker runs: the jobs wait
      expect((await send()).error).toBeNull();
      const perExport = await queued();
      expect(perExport).toBeGreaterThan(0);
      child.kill('SIGTERM');
      // While a balancer sees /readyz fail (SHUTDOWN_DELAY_MS), exports are still taken.
      expect((await send()).error).toBeNull();
      // The Collector's idle connection does not hold the shutdown up.
      expect(await exited).toBe(0);
      expect((await send()).error?.code).toBe(grpc.status.UNAVAILABLE);
      expect(await queued()).toBe(2 * perExport);
    } finally {
      client.close();
      await redis.quit();
      child.kill('SIGKILL'); // left running by nothing: exited above, or killed here when a check failed
    }
  });
});
