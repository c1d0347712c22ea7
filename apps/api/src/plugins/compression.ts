import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import compress from '@fastify/compress';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

// JSON (a 10,000-span trace's skeleton is 3.7 MB), text and the console's scripts.
// Never Server-Sent Events: a compressor holds events back until its buffer fills, so the live tail and a
// streamed completion would stall. @fastify/sse writes to the socket itself; this keeps them out regardless.
const COMPRESSIBLE = /^application\/(?:[\w.-]+\+)?json(?:;|$)|^text\/(?!event-stream)|^application\/javascript(?:;|$)/;

const BROTLI_QUALITY = 1;

/**
 * An answer written whole (not streamed) from this size on is compressed in one call on libuv's thread pool,
 * and says its length. The plugin compresses such an answer as a stream, in slices that each cross to the pool
 * and back: the 4.4 MB skeleton of a 10,000-span trace took 109–117 ms that way and 84–88 ms in one call (p50
 * of the request, brotli, both on one database, alternated). Below this size the plugin compresses in one call
 * on the event loop, which takes less than a crossing.
 */
const ONE_CALL_BYTES = 64 * 1024;
const brotliOnPool = promisify(brotliCompress),
  gzipOnPool = promisify(gzip);
const COMPRESS = {
  br: (body: Buffer) =>
    brotliOnPool(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body: Buffer) => gzipOnPool(body),
};

async function compressWhole(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload) : Buffer.isBuffer(payload) ? payload.length : 0;
  if (
    size < ONE_CALL_BYTES ||
    reply.hasHeader('content-encoding') ||
    reply.statusCode === 206 ||
    req.headers['x-no-compression'] !== undefined ||
    !COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''))
  )
    return payload;
  const encoding = negotiate(req.headers['accept-encoding']?.toLowerCase() ?? '', ['br', 'gzip']) as
    keyof typeof COMPRESS | undefined;
  if (!encoding) return payload;
  const body = typeof payload === 'string' ? Buffer.from(payload) : (payload as Buffer);
  const vary = reply.getHeader('vary');
  if (!vary) reply.header('vary', 'accept-encoding');
  else if (!/accept-encoding/i.test(String(vary))) reply.header('vary', `${String(vary)}, accept-encoding`);
  reply.header('content-encoding', encoding);
  return COMPRESS[encoding](body);
}

/**
 * Answers compressed with brotli or gzip when the client accepts it and the answer is at least 1 KB;
 * smaller ones cost more to compress than they save. Brotli at quality 1: on a 10,000-span trace, the
 * 14 MB trace log takes 41 ms to 1.54 MB, where the plugin's default (4) takes 116 ms to 1.48 MB; the
 * 4.4 MB skeleton 12 ms to 295 KB, against 36 ms to 293 KB. The answers' JSON repeats itself so much that
 * the fastest quality loses almost nothing, and the time is on every open of a large trace.
 *
 * Request bodies are read as before: the OTLP intake inflates gzip itself.
 */
export default fp(
  async (app) => {
    // Runs before the plugin's own hook (an application's hooks run before a route's), which then leaves an
    // answer that already has its encoding as it is.
    app.addHook('onSend', compressWhole);
    await app.register(compress, {
      encodings: ['br', 'gzip'],
      brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
      threshold: 1024,
      customTypes: COMPRESSIBLE,
      globalDecompression: false,
    });
  },
  { name: 'compression' },
);
