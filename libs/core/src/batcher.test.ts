import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher';

describe('createBatcher', () => {
  it('flushes concurrent adds together and settles each only after its flush', async () => {
    const flushed: number[][] = [];
    const batcher = createBatcher<number>(async (items) => void flushed.push(items), { maxItems: 100, lingerMs: 5 });
    await Promise.all([batcher.add([1]), batcher.add([2, 3]), batcher.add([4])]);
    expect(flushed).toEqual([[1, 2, 3, 4]]);
  });
  it('splits at maxItems', async () => {
    const flushed: number[][] = [];
    const batcher = createBatcher<number>(async (items) => void flushed.push(items), {
      maxItems: 2,
      lingerMs: 5,
      maxConcurrent: 1,
    });
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add([n])));
    expect(flushed.flat()).toEqual([1, 2, 3, 4, 5]);
    expect(Math.max(...flushed.map((f) => f.length))).toBe(2);
  });
  it('isolates a failing group: only its caller sees the error', async () => {
    const batcher = createBatcher<number>(
      async (items) => {
        if (items.includes(13)) throw new Error('bad item');
      },
      { maxItems: 100, lingerMs: 5 },
    );
    const results = await Promise.allSettled([batcher.add([1]), batcher.add([13]), batcher.add([2])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
