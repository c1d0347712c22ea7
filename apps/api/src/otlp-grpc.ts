import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { FastifyInstance } from 'fastify';
import { statusMessage } from '@sightline/otel';

// The OTLP trace service over gRPC. Each call is the HTTP intake's request, handed to it in this process
// (app.inject): the same authentication, project choice, mapping, ordering, partial success, backlog and rate
// limits, logs and metrics, with no second path to keep the same. Messages stay bytes here: the intake decodes them.
const bytes = (b: Buffer) => b;
const TRACE_SERVICE: grpc.ServiceDefinition = {
  Export: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
};

// The metadata the intake reads, as the HTTP headers of the same names.
const FORWARDED = ['authorization', 'x-api-key', 'x-user-id', 'x-project-name', 'user-agent'];

// The gRPC status of each answer of the intake. A full backlog (429) and a lost dependency (503) are UNAVAILABLE,
// which every OTLP exporter retries, with the intake's Retry-After as RetryInfo.
const CODE_OF_STATUS: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  413: grpc.status.RESOURCE_EXHAUSTED,
  415: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.UNAVAILABLE,
  503: grpc.status.UNAVAILABLE,
};

// google.rpc.Status with a google.rpc.RetryInfo detail, in `grpc-status-details-bin`, which the Collector's
// exporter reads for how long to wait before it retries.
const Duration = new protobuf.Type('Duration')
  .add(new protobuf.Field('seconds', 1, 'int64'))
  .add(new protobuf.Field('nanos', 2, 'int32'));
const RetryInfo = new protobuf.Type('RetryInfo').add(new protobuf.Field('retry_delay', 1, 'Duration'));
const Any = new protobuf.Type('Any')
  .add(new protobuf.Field('type_url', 1, 'string'))
  .add(new protobuf.Field('value', 2, 'bytes'));
const RpcStatus = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'))
  .add(new protobuf.Field('details', 3, 'Any', 'repeated'));
new protobuf.Root().add(Duration).add(RetryInfo).add(Any).add(RpcStatus);

function retryDetails(code: grpc.status, message: string, seconds: number): grpc.Metadata {
  const retryInfo = RetryInfo.encode({ retry_delay: { seconds, nanos: 0 } }).finish();
  const details = RpcStatus.encode({
    code,
    message,
    details: [{ type_url: 'type.googleapis.com/google.rpc.RetryInfo', value: retryInfo }],
  }).finish();
  const metadata = new grpc.Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(details));
  return metadata;
}

/** The address of a peer as grpc-js names it (`127.0.0.1:5123`, `[::1]:5123`), without its port. */
const addressOf = (peer: string) => peer.replace(/^\[?(.*?)\]?:\d+$/, '$1');

async function exportCall(
  app: FastifyInstance,
  call: grpc.ServerUnaryCall<Buffer, Buffer>,
  callback: grpc.sendUnaryData<Buffer>,
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-protobuf' };
  for (const name of FORWARDED) {
    const [value] = call.metadata.get(name);
    if (typeof value === 'string') headers[name] = value;
  }
  const answer = await app.inject({
    method: 'POST',
    url: '/v1/traces',
    headers,
    payload: call.request,
    remoteAddress: addressOf(call.getPeer()),
  });
  if (answer.statusCode === 200) return callback(null, answer.rawPayload);
  const code = CODE_OF_STATUS[answer.statusCode] ?? grpc.status.INTERNAL;
  const details = statusMessage(answer.rawPayload);
  const retryAfter = Number(answer.headers['retry-after']);
  callback({
    code,
    details,
    ...(code === grpc.status.UNAVAILABLE &&
      Number.isFinite(retryAfter) && { metadata: retryDetails(code, details, retryAfter) }),
  });
}

export type OtlpGrpcServer = { port: number; close(graceMs: number): Promise<void> };

/**
 * Serves OTLP/gRPC trace export on `port` (0: a free one), gzip or not, messages up to the HTTP intake's body
 * limit (past it grpc-js answers RESOURCE_EXHAUSTED).
 */
export async function serveOtlpGrpc(app: FastifyInstance, host: string, port: number): Promise<OtlpGrpcServer> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': app.config.OTLP_BODY_LIMIT_BYTES });
  server.addService(TRACE_SERVICE, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      void exportCall(app, call, callback).catch((err: Error) =>
        callback({ code: grpc.status.INTERNAL, details: err.message }),
      ),
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${host.includes(':') ? `[${host}]` : host}:${port}`,
      grpc.ServerCredentials.createInsecure(),
      (err, p) => (err ? reject(err) : resolve(p)),
    ),
  );
  return {
    port: bound,
    // Calls under way finish (their spans are in Redis by then); past the grace they are cut.
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
