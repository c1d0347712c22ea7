import { describe, expect, it } from 'vitest';
import { retryAfterMsOf } from './providers/overload';

describe('retryAfterMsOf', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  const of = (headers: Record<string, string>) => retryAfterMsOf(new Headers(headers), now);

  it('reads retry-after-ms first, then Retry-After as seconds or as an HTTP date', () => {
    expect(of({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
    expect(of({ 'retry-after': '2' })).toBe(2000);
    expect(of({ 'retry-after': '0.5' })).toBe(500);
    expect(of({ 'retry-after': 'Wed, 25 Nov 2026 12:00:03 GMT' })).toBe(3000);
  });

  it('has no wait when the provider gave none, or none that can be read', () => {
    expect(of({})).toBeUndefined();
    expect(retryAfterMsOf(undefined)).toBeUndefined();
    expect(of({ 'retry-after': 'soon' })).toBeUndefined();
    expect(of({ 'retry-after': '-1' })).toBeUndefined();
    expect(of({ 'retry-after': 'Wed, 25 Nov 2026 11:00:00 GMT' })).toBe(0); // a date already past
  });
});
