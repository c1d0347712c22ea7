import { Readable } from 'node:stream';

/**
 * A JSON document written piece by piece: `head`, then the items of every chunk as one array, then `tail`.
 * Large answers (an experiment's per-trace stats) never sit whole in memory.
 */
export function jsonArrayStream<T>(head: string, chunks: AsyncIterable<T[]>, tail: string, map: (item: T) => unknown = (x) => x): Readable {
  return Readable.from(
    (async function* () {
      yield head + '[';
      let first = true;
      for await (const chunk of chunks) {
        if (!chunk.length) continue;
        yield (first ? '' : ',') + chunk.map((item) => JSON.stringify(map(item))).join(',');
        first = false;
      }
      yield ']' + tail;
    })(),
  );
}
