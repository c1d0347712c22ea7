import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSearch, searchWords } from './search';

describe('parseSearch', () => {
  it('reads words, quoted phrases and excluded words', () => {
    expect(parseSearch('  velvet "granite kettle" -refund  -"two words" x ')).toEqual({
      include: ['velvet', 'granite kettle', 'x'],
      exclude: ['refund', 'two words'],
    });
    expect(parseSearch('"" - ')).toEqual({ include: [], exclude: [] });
  });
});

describe('searchWords', () => {
  // The definition: runs of letters (and their marks) between characters that are neither letters nor
  // digits, lower-cased, without runs that hold a digit or are longer than 100, each once, in order.
  const byDefinition = (text: string) => [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^\p{L}\p{M}\p{N}]+/u)
        .filter((t) => t && t.length <= 100 && !/\p{N}/u.test(t)),
    ),
  ];

  it('finds the words of ASCII text as the definition does (its own pass over the characters)', () => {
    const pieces = [
      'a',
      'Ab',
      'word',
      'WORD',
      'the',
      'x1',
      '42',
      '_',
      '-',
      ' ',
      '"',
      '{',
      '\n',
      '\\u0041',
      'z'.repeat(100),
      'y'.repeat(101),
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        expect(searchWords(text)).toEqual(byDefinition(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 300 }), (text) => {
        expect(searchWords(text)).toEqual(byDefinition(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart many distinct words, whatever their characters hash to', () => {
    // 200k random words: enough for some pairs to share any 30-bit digest of their characters.
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const words = Array.from({ length: 200_000 }, (_, i) =>
      Array.from({ length: 4 + (i % 6) }, () => letters[Math.floor(Math.random() * 26)]).join(''),
    );
    const text = words.join(' ');
    expect(searchWords(text)).toEqual(byDefinition(text));
  });

  it('finds the words of any text by the definition', () => {
    expect(searchWords('Ünïcode café naïve 東京 x2 Straße ÉTÉ été')).toEqual([
      'ünïcode',
      'café',
      'naïve',
      '東京',
      'straße',
      'été',
    ]);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        expect(searchWords(text)).toEqual(byDefinition(text));
      }),
      { numRuns: 500 },
    );
  });
});
