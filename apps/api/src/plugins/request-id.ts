import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';

// A caller's id is kept only when it is short and plain. It is written into every log line of the request
// and echoed in a header, so an arbitrary one would let a caller forge log content (quotes, control
// characters, text that reads as other fields when logs are pretty-printed or grepped) or inflate every
// line of the request with a huge value.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@=+/-]{1,128}$/;

/** Fastify's `genReqId`: the caller's `x-request-id` when it is safe, else a new UUID. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Every response carries the request's id in `x-request-id`, the id its log lines carry (`reqId`). It is
 * set on the raw response before any other hook runs, so errors, 404s, early refusals by later hooks and
 * streams that write their own head all carry it.
 */
export default fp(
  async (app) => {
    app.addHook('onRequest', (req, reply, done) => {
      reply.raw.setHeader('x-request-id', req.id);
      done();
    });
  },
  { name: 'request-id' },
);
