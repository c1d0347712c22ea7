import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * A JSON document written piece by piece: `head`, then the items of every chunk as one array, then `tail`.
 * Large answers (an experiment's per-trace stats) never sit whole in memory. The first chunk is read
 * before anything is sent, so a failure at the start is still an ordinary error answer; a failure
 * later aborts the connection rather than end a 200 with truncated JSON.
 */
export async function jsonArrayStream<T>(head: string, chunks: AsyncIterable<T[]>, tail: string): Promise<Readable> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  return Readable.from(
    (async function* () {
      yield head + '[';
      let separator = '';
      for (let step = first; !step.done; step = await iterator.next()) {
        if (!step.value.length) continue;
        yield separator + step.value.map((item) => JSON.stringify(item)).join(',');
        separator = ',';
      }
      yield ']' + tail;
    })(),
  );
}

/** Sends a JSON stream; the route's response schema describes the document it writes. */
export function sendJsonStream(reply: { type(t: string): unknown }, stream: Readable) {
  return ((reply as FastifyReply).type('application/json') as FastifyReply).send(stream);
}

/** Sends JSON that is already serialized; the route's response schema describes it. */
export function sendSerializedJson(reply: { type(t: string): unknown }, json: Buffer) {
  return ((reply as FastifyReply).type('application/json; charset=utf-8') as FastifyReply).send(json);
}
