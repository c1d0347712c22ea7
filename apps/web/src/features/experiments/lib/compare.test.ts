import { describe, expect, it } from 'vitest';
import { formatDifference, formatP, toneOf, verdict } from './compare';

const comparison = (c: Partial<Parameters<typeof verdict>[1]>) => ({
  uuid: 'b',
  pairs: 20,
  mean_difference: 0,
  ci_low: null,
  ci_high: null,
  p_value: null,
  significant: false,
  improved: 0,
  regressed: 0,
  unchanged: 0,
  ...c,
});

describe('comparing against a baseline', () => {
  it('reads a difference by the side of the metric that is better', () => {
    expect(toneOf({ better: 'higher' }, 0.2)).toBe('better');
    expect(toneOf({ better: 'lower' }, 0.2)).toBe('worse');
    expect(toneOf({ better: 'lower' }, -1)).toBe('better');
    expect(toneOf({ better: 'higher' }, 0)).toBe('same');
    expect(toneOf({ better: 'higher' }, null)).toBe('same');
  });
  it('calls a difference significant only when the test says so, and in which direction', () => {
    const latency = { better: 'lower' as const };
    expect(verdict(latency, comparison({ p_value: 0.01, significant: true, mean_difference: 0.3 }))).toEqual({
      label: 'significantly worse',
      tone: 'worse',
    });
    expect(verdict(latency, comparison({ p_value: 0.01, significant: true, mean_difference: -0.3 })).tone).toBe(
      'better',
    );
    expect(verdict(latency, comparison({ p_value: 0.2, mean_difference: -0.3 })).label).toBe('not significant');
    expect(verdict(latency, comparison({ p_value: null })).label).toBe('no difference');
    expect(verdict(latency, comparison({ p_value: null, pairs: 0 })).label).toBe('no pairs');
  });
  it('writes differences in the metric’s unit and p-values briefly', () => {
    expect(formatDifference('latency', -0.25)).toBe('−250 ms');
    expect(formatDifference('latency', 1.5)).toBe('+1.50 s');
    expect(formatDifference('cost', 0.0021)).toBe('+$0.0021');
    expect(formatDifference('score', 0.125)).toBe('+0.125');
    expect(formatDifference('score', 0)).toBe('±0.000');
    expect(formatP(0.0004)).toBe('p < 0.001');
    expect(formatP(0.0412)).toBe('p = 0.04');
    expect(formatP(0.0042)).toBe('p = 0.004');
  });
});
