import { createRequire } from 'node:module';
import protobuf from 'protobufjs';

// The OTLP messages as protobufjs static code, from the package that published them (its later versions
// stopped shipping them). Decoding and encoding are that code's; nothing here reads the wire format.
const root = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const collector = root.opentelemetry.proto.collector.trace.v1;

type Message = Record<string, unknown>;
type MessageType = {
  decode(buf: Uint8Array): Message;
  encode(message: Message): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): Message;
};
const ExportTraceServiceRequest = collector.ExportTraceServiceRequest as MessageType;
const ExportTraceServiceResponse = collector.ExportTraceServiceResponse as MessageType;

// google.rpc.Status, the body of an OTLP error answer; the OTLP package does not define it, so it is
// declared here through protobufjs's reflection (its `details` are never sent).
const Status = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));

/** The request's `resourceSpans` as protobufjs decoded them; throws on a body that is not such a message. */
export function decodeProtobufRequest(body: Uint8Array): unknown[] {
  return (ExportTraceServiceRequest.decode(body).resourceSpans as unknown[]) ?? [];
}

export type ExportResult = { rejectedSpans: number; errorMessage: string };

/** ExportTraceServiceResponse: empty when every span was accepted, else its partial success. */
export function exportResponse(result: ExportResult, encoding: 'json' | 'protobuf'): Uint8Array | string {
  const partialSuccess = result.rejectedSpans > 0 || result.errorMessage ? result : null;
  if (encoding === 'json') {
    // Proto3 JSON: int64 as a decimal string.
    return JSON.stringify(
      partialSuccess
        ? {
            partialSuccess: {
              rejectedSpans: String(partialSuccess.rejectedSpans),
              errorMessage: partialSuccess.errorMessage,
            },
          }
        : {},
    );
  }
  return ExportTraceServiceResponse.encode(
    ExportTraceServiceResponse.fromObject(partialSuccess ? { partialSuccess } : {}),
  ).finish();
}

/** A google.rpc.Status body for an error answer, in the request's encoding. */
export function statusBody(code: number, message: string, encoding: 'json' | 'protobuf'): Uint8Array | string {
  return encoding === 'json'
    ? JSON.stringify({ code, message })
    : Status.encode(Status.fromObject({ code, message })).finish();
}

/** The message of a google.rpc.Status body (an error answer in protobuf). */
export function statusMessage(body: Uint8Array): string {
  return String(Status.decode(body).toJSON().message ?? '');
}
