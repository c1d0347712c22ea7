import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSampledIn, unitHash } from './sampling';

describe('isSampledIn', () => {
  it('keeps everything at rate 1 or when unset, and nothing at rate 0', () => {
    const id = randomUUID();
    expect(isSampledIn(id, 1)).toBe(true);
    expect(isSampledIn(id, undefined)).toBe(true);
    expect(isSampledIn(id, 0)).toBe(false);
  });
  it('is a deterministic function of the root id', () => {
    for (let i = 0; i < 100; i++) {
      const id = randomUUID();
      expect(isSampledIn(id, 0.3)).toBe(isSampledIn(id.toUpperCase(), 0.3));
    }
  });
  it('keeps about the requested fraction', () => {
    const n = 20_000;
    let kept = 0;
    for (let i = 0; i < n; i++) if (isSampledIn(randomUUID(), 0.25)) kept++;
    expect(kept / n).toBeGreaterThan(0.23);
    expect(kept / n).toBeLessThan(0.27);
  });
  it('maps ids into [0, 1)', () => {
    const h = unitHash('x');
    expect(h).toBeGreaterThanOrEqual(0);
    expect(h).toBeLessThan(1);
  });
});
