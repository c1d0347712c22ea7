import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import fp from 'fastify-plugin';

// JSON (a 10,000-span trace's skeleton is 3.7 MB), text and the console's scripts.
// Never Server-Sent Events: a compressor holds events back until its buffer fills, so the live tail and a
// streamed completion would stall. @fastify/sse writes to the socket itself; this keeps them out regardless.
const COMPRESSIBLE = /^application\/(?:[\w.-]+\+)?json(?:;|$)|^text\/(?!event-stream)|^application\/javascript(?:;|$)/;

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
    await app.register(compress, {
      encodings: ['br', 'gzip'],
      brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } },
      threshold: 1024,
      customTypes: COMPRESSIBLE,
      globalDecompression: false,
    });
  },
  { name: 'compression' },
);
