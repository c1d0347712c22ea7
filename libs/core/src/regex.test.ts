import { describe, expect, it } from 'vitest';
import { compileRegex, estimatedProgramSize, regexError } from './regex';

describe('user-supplied patterns', () => {
  it('run on RE2, in time linear in the text', () => {
    // Exponential on a backtracking engine, which safe-regex2's heuristic let through.
    expect(compileRegex('^(a|a)+$').test(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(compileRegex('(x+x+)+y').test('x'.repeat(100_000))).toBe(false);
  });
  it('map the flags i, m and s to RE2, take u as a no-op, and refuse any other', () => {
    expect(compileRegex('abc', 'i').test('ABC')).toBe(true);
    expect(compileRegex('^b$', 'm').test('a\nb')).toBe(true);
    expect(compileRegex('a.b', 's').test('a\nb')).toBe(true);
    expect(compileRegex('a.b', 'u').test('a\nb')).toBe(false);
    expect(regexError('a', 'g')).toMatch(/flag 'g'/);
  });
  it('refuse what RE2 cannot compile, saying why', () => {
    expect(regexError('(a)\\1')).toMatch(/backreferences.*\\1/);
    expect(regexError('a(?=b)')).toMatch(/lookarounds.*\(\?=/);
    expect(regexError('(?<=a)b')).toEqual(expect.any(String));
    expect(regexError('(')).toMatch(/missing closing \)/);
    expect(regexError('\\d{3}-(?P<n>\\w+)|[^\\s]')).toBeNull();
  });
  it('refuse a pattern whose repeats expand to a program too large to match quickly', () => {
    expect(regexError('[a-z]{1000}'.repeat(4))).toBeNull();
    expect(regexError('[a-z]{1000}'.repeat(6))).toMatch(/too large: about 6002 instructions/);
    // Far over the limit by its estimate, refused before compiling: compiling such a program takes seconds.
    expect(regexError('a{1000}'.repeat(1000))).toMatch(/too large: about 1000000 instructions/);
  });
  it('estimate the compiled size from the text, within a factor of two', () => {
    for (const pattern of ['a{1000}', 'x{0,1000}', '(?:ab|cd|ef){100}', '((a{10}){10}){10}', '[]a]{99}', '\\pL{50}']) {
      const size = compileRegex(pattern).re2Input.prog.numInst() as number;
      expect(estimatedProgramSize(pattern), pattern).toBeGreaterThanOrEqual(size / 2);
      expect(estimatedProgramSize(pattern), pattern).toBeLessThanOrEqual(size * 2);
    }
  });
});
