import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

// OTLP requests as exporters send them: OTLP/JSON, or protobuf encoded by protobufjs from the published
// message definitions (the same the exporters of @opentelemetry/otlp-transformer 0.52 use).
const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

export type Value = string | number | boolean | Value[] | { [key: string]: Value };
export type SpanSpec = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  start?: bigint;
  end?: bigint;
  attributes?: Record<string, Value>;
  events?: { name: string; time?: bigint; attributes?: Record<string, Value> }[];
  status?: { code: number; message?: string };
};

export const traceIdHex = () => randomBytes(16).toString('hex');
/** 32 hex digits as a UUID: a trace id is its root span's UUID. */
export const uuidOfHex = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
export const spanIdHex = () => randomBytes(8).toString('hex');

/** An attribute value in OTLP/JSON's AnyValue shape. */
function anyValue(v: Value): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: keyValues(v) } };
}
const keyValues = (attrs: Record<string, Value> = {}) =>
  Object.entries(attrs).map(([key, value]) => ({ key, value: anyValue(value) }));

const T0 = 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z in nanoseconds

/** An ExportTraceServiceRequest in OTLP/JSON: ids in hex, 64-bit integers as decimal strings. */
export function otlpJson(spans: SpanSpec[], resource: Record<string, Value> = { 'service.name': 'otel-test' }) {
  return {
    resourceSpans: [
      {
        resource: { attributes: keyValues(resource) },
        scopeSpans: [
          {
            scope: { name: 'sightline-test', version: '1.0.0' },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId && { parentSpanId: s.parentSpanId }),
              name: s.name,
              kind: s.kind ?? 1,
              startTimeUnixNano: String(s.start ?? T0),
              endTimeUnixNano: String(s.end ?? (s.start ?? T0) + 1_500_000_123n),
              attributes: keyValues(s.attributes),
              events: (s.events ?? []).map((e) => ({
                name: e.name,
                timeUnixNano: String(e.time ?? T0),
                attributes: keyValues(e.attributes),
              })),
              status: s.status ?? { code: 0 },
            })),
          },
        ],
      },
    ],
  };
}

const hexToBytes = (hex: string) => Buffer.from(hex, 'hex');

/** The same request as protobuf bytes. */
export function otlpProtobuf(json: ReturnType<typeof otlpJson>): Buffer {
  const withBytes = {
    resourceSpans: json.resourceSpans.map((rs) => ({
      ...rs,
      scopeSpans: rs.scopeSpans.map((ss) => ({
        ...ss,
        spans: ss.spans.map((s) => ({
          ...s,
          traceId: hexToBytes(s.traceId),
          spanId: hexToBytes(s.spanId),
          ...(s.parentSpanId && { parentSpanId: hexToBytes(s.parentSpanId) }),
        })),
      })),
    })),
  };
  return Buffer.from(Request.encode(Request.fromObject(withBytes)).finish());
}

/** An ExportTraceServiceResponse's fields from protobuf bytes. */
export function decodeExportResponse(body: Buffer): {
  partialSuccess?: { rejectedSpans?: string; errorMessage?: string };
} {
  return Response.toObject(Response.decode(body), { longs: String });
}

export type PostOptions = {
  encoding?: 'json' | 'protobuf';
  gzip?: boolean;
  path?: string;
  headers?: Record<string, string>;
  key?: string | null;
};

/** POST an OTLP body (an object for JSON, bytes for protobuf, or raw text) to the intake. */
export function postOtlp(app: FastifyInstance, key: string, body: unknown, options: PostOptions = {}) {
  const encoding = options.encoding ?? 'json';
  let payload: Buffer | string =
    Buffer.isBuffer(body) || typeof body === 'string'
      ? body
      : encoding === 'json'
        ? JSON.stringify(body)
        : otlpProtobuf(body as ReturnType<typeof otlpJson>);
  if (options.gzip) payload = gzipSync(payload);
  return app.inject({
    method: 'POST',
    url: options.path ?? '/v1/traces',
    headers: {
      'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
      ...(options.gzip && { 'content-encoding': 'gzip' }),
      ...(options.key !== null && { authorization: `Bearer ${options.key ?? key}` }),
      ...options.headers,
    },
    payload,
  });
}
