// The benchmark's spans (spans.ts) as an OpenTelemetry SDK exports them: OTLP/HTTP protobuf requests, the
// exporters' default encoding, encoded by protobufjs from the definitions the exporters of
// @opentelemetry/otlp-transformer 0.52 use. Each field the batch benchmark sends is an attribute of the
// GenAI semantic conventions (or OpenInference's `input.value`), so both intakes store the same spans.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { BenchSpan } from './spans';

const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const collector = root.opentelemetry.proto.collector.trace.v1;
type MessageType = {
  encode(message: unknown): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
  fromObject(object: Record<string, unknown>): unknown;
  toObject(message: unknown, options: { longs: typeof String }): Record<string, unknown>;
};
const ExportTraceServiceRequest = collector.ExportTraceServiceRequest as MessageType;
const ExportTraceServiceResponse = collector.ExportTraceServiceResponse as MessageType;

type Value = string | number | string[];
/** An attribute in OTLP's KeyValue shape (as protobufjs's `fromObject` takes it). */
function keyValue(key: string, value: Value) {
  const any = (v: string | number) =>
    typeof v === 'string' ? { stringValue: v } : Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
  return { key, value: Array.isArray(value) ? { arrayValue: { values: value.map(any) } } : any(value) };
}

const nanos = (iso: unknown) => String(BigInt(Date.parse(String(iso))) * 1_000_000n);
const textParts = (content: unknown) => [{ type: 'text', content }];

/**
 * One benchmark span's fields as OTel attributes. `withCost`: the span carries its cost (OpenInference's
 * `llm.cost.total`), as the batch benchmark's spans do; without it, the API prices the tokens.
 */
function attributesOf(span: BenchSpan, withCost: boolean): Record<string, Value> {
  const configuration = span.configuration as {
    model: string;
    provider: string;
    temp: number;
    max_length: number;
    messages: { role: string; content: string }[];
  };
  return {
    'input.value': JSON.stringify(span.inputs),
    'input.mime_type': 'application/json',
    'gen_ai.request.model': configuration.model,
    'gen_ai.provider.name': configuration.provider,
    'gen_ai.request.temperature': configuration.temp,
    'gen_ai.request.max_tokens': configuration.max_length,
    'gen_ai.input.messages': JSON.stringify(
      configuration.messages.map((m) => ({ role: m.role, parts: textParts(m.content) })),
    ),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: textParts(span.output) }]),
    'gen_ai.usage.input_tokens': span.input_tokens as number,
    'gen_ai.usage.output_tokens': span.output_tokens as number,
    ...(withCost && { 'llm.cost.total': span.cost as number }),
    ...(span.metadata as Record<string, string>),
    'user.id': span.end_user_identifier as string,
    'session.id': span.session_id as string,
    'tag.tags': span.tags as string[],
  };
}

/** A trace's spans in OTLP: one fresh trace id, the root the parent of the others (as in the batch's tree). */
function otlpTrace(trace: BenchSpan[], withCost: boolean) {
  const traceId = randomBytes(16);
  const spanIds = trace.map(() => randomBytes(8));
  const spans = trace.map((span, i) => ({
    traceId,
    spanId: spanIds[i],
    ...(i > 0 && { parentSpanId: spanIds[0] }),
    name: span.trace_name,
    kind: 1,
    startTimeUnixNano: nanos(span.start_timestamp),
    endTimeUnixNano: nanos(span.end_timestamp),
    attributes: Object.entries(attributesOf(span, withCost)).map(([k, v]) => keyValue(k, v)),
    status: { code: span.status === 'error' ? 2 : 0 },
  }));
  return { traceId, spans };
}

/**
 * An endless supply of ExportTraceServiceRequest bodies of `spansPerRequest` spans (whole traces) from
 * `traces`, every span new. The bodies are encoded once; each is sent again with a per-request counter
 * written into bytes 2–7 of every trace id, found once by their place in the encoded bytes. A stored span's
 * id is its trace id (a root) or the trace id's first 8 bytes and its span id, so every id changes. The
 * same buffer is handed out each time: autocannon copies a body into the request it builds at once.
 */
export function otlpBodies(traces: BenchSpan[][], spansPerRequest: number, withCost: boolean): () => Buffer {
  const tracesPerRequest = Math.max(1, Math.round(spansPerRequest / traces[0].length));
  const bodies: { bytes: Buffer; offsets: number[] }[] = [];
  for (let first = 0; first + tracesPerRequest <= traces.length; first += tracesPerRequest) {
    const group = traces.slice(first, first + tracesPerRequest).map((t) => otlpTrace(t, withCost));
    const project = String(traces[first][0].project_name);
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [keyValue('service.name', project)] },
          scopeSpans: [{ scope: { name: 'sightline-bench', version: '1.0.0' }, spans: group.flatMap((t) => t.spans) }],
        },
      ],
    };
    const bytes = Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish());
    // Spans are encoded in order, each starting with its trace id (field 1).
    const offsets: number[] = [];
    let at = 0;
    for (const { traceId, spans } of group)
      for (let i = 0; i < spans.length; i++) {
        at = bytes.indexOf(traceId, at);
        if (at < 0) throw new Error('a trace id is not where the encoding should have put it');
        offsets.push(at);
        at += traceId.length;
      }
    bodies.push({ bytes, offsets });
  }
  if (!bodies.length) throw new Error(`${traces.length} traces do not fill a request of ${spansPerRequest} spans`);
  let counter = Math.floor(Math.random() * 2 ** 40);
  let next = 0;
  return () => {
    const body = bodies[next];
    next = (next + 1) % bodies.length;
    counter++;
    for (const offset of body.offsets) body.bytes.writeUIntBE(counter, offset + 2, 6);
    return body.bytes;
  };
}

/** An ExportTraceServiceResponse's partial success, from its protobuf bytes (empty when every span was taken). */
export function partialSuccess(body: Uint8Array): { rejectedSpans?: string; errorMessage?: string } | undefined {
  const response = ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(body), { longs: String });
  return response.partialSuccess as { rejectedSpans?: string; errorMessage?: string } | undefined;
}
