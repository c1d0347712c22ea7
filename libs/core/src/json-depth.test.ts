import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth';

describe('nestsDeeperThan', () => {
  it('counts levels of arrays and objects, not scalars', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: 'x' }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
  });
  it('measures a value deeper than the call stack', () => {
    expect(nestsDeeperThan(JSON.parse('['.repeat(400_000) + ']'.repeat(400_000)), 1000)).toBe(true);
  });
});
