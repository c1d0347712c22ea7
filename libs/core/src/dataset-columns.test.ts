import { describe, expect, it } from 'vitest';
import { columnMismatch } from './dataset-columns';

describe('columnMismatch', () => {
  it('accepts exactly the columns', () => {
    expect(columnMismatch(['a', 'b'], { b: '1', a: '2' }, true)).toBeNull();
  });
  it('names unknown and missing columns', () => {
    expect(columnMismatch(['a', 'b'], { a: '1', c: '2' }, true)).toMatch(
      /unknown column\(s\): c; missing column\(s\): b/,
    );
  });
  it('only refuses unknown columns when not exact (a partial update)', () => {
    expect(columnMismatch(['a', 'b'], { a: '1' }, false)).toBeNull();
    expect(columnMismatch(['a'], { z: '1' }, false)).toMatch(/unknown column\(s\): z/);
  });
  it('is not fooled by built-in object properties', () => {
    expect(columnMismatch(['toString'], {}, true)).toMatch(/missing column\(s\): toString/);
  });
});
