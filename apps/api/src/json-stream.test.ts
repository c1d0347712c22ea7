import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { jsonArrayStream } from './json-stream';

async function* chunks<T>(...parts: (T[] | Error)[]) {
  for (const part of parts) {
    if (part instanceof Error) throw part;
    yield part;
  }
}

describe('jsonArrayStream', () => {
  it('writes one JSON document from many chunks', async () => {
    const stream = await jsonArrayStream('{"items":', chunks<unknown>([1, 2], [], [{ a: 3 }]), '}');
    expect(JSON.parse(await text(stream))).toEqual({ items: [1, 2, { a: 3 }] });
    expect(JSON.parse(await text(await jsonArrayStream('{"items":', chunks(), '}')))).toEqual({ items: [] });
  });
  it('fails before sending anything when the first chunk fails', async () => {
    await expect(jsonArrayStream('{"items":', chunks(new Error('db down')), '}')).rejects.toThrow('db down');
  });
  it('errors the stream, rather than ending it as if complete, when a later chunk fails', async () => {
    const stream = await jsonArrayStream('{"items":', chunks([1], new Error('lost')), '}');
    await expect(text(stream)).rejects.toThrow('lost');
  });
});
