import { describe, expect, it } from 'vitest';
import { parseSearch } from './search';

describe('parseSearch', () => {
  it('reads words, quoted phrases and excluded words', () => {
    expect(parseSearch('  velvet "granite kettle" -refund  -"two words" x ')).toEqual({
      include: ['velvet', 'granite kettle', 'x'],
      exclude: ['refund', 'two words'],
    });
    expect(parseSearch('"" - ')).toEqual({ include: [], exclude: [] });
  });
});
