import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { judgeMonitor, median } from './monitor-state';

const reading = (value: number | null, samples = 100) => ({ value, samples });

describe('a monitor judged from its window', () => {
  it('says nothing from fewer traces than it needs', () => {
    expect(judgeMonitor({ above: 0.1 }, 10, reading(0.9, 9)).state).toBe('no_data');
    expect(judgeMonitor({ above: 0.1 }, 10, reading(null, 50)).state).toBe('no_data');
    expect(judgeMonitor({ above: 0.1 }, 10, reading(0.9, 10))).toEqual({ state: 'firing', value: 0.9, threshold: 0.1 });
  });

  it('fires strictly past a bound', () => {
    expect(judgeMonitor({ above: 0.1 }, 1, reading(0.1)).state).toBe('ok');
    expect(judgeMonitor({ below: 0.5 }, 1, reading(0.49)).state).toBe('firing');
    expect(judgeMonitor({ below: 0.5 }, 1, reading(0.5)).state).toBe('ok');
  });

  it('fires on an anomaly: further from the median of the previous days than k median absolute deviations', () => {
    // Seven days of error rates: median 0.05, deviations 0.01, 0, 0.01, 0, 0.02, 0.01, 0 → MAD 0.01.
    const days = [0.04, 0.05, 0.06, 0.05, 0.07, 0.04, 0.05].map((v) => reading(v));
    expect(judgeMonitor({ anomaly: { mads: 3 } }, 10, reading(0.079), days)).toMatchObject({
      state: 'ok',
      baseline: 0.05,
      mad: expect.closeTo(0.01, 12),
    });
    expect(judgeMonitor({ anomaly: { mads: 3 } }, 10, reading(0.09), days).state).toBe('firing');
    expect(judgeMonitor({ anomaly: { mads: 3 } }, 10, reading(0.01), days).state).toBe('firing');
  });

  it('needs three days of history with enough traces for an anomaly', () => {
    const days = [reading(0.05), reading(0.05), reading(0.9, 2), reading(null, 0)];
    expect(judgeMonitor({ anomaly: { mads: 3 } }, 10, reading(0.5), days).state).toBe('no_data');
    expect(judgeMonitor({ anomaly: { mads: 3 } }, 10, reading(0.5), [...days, reading(0.05)]).state).toBe('firing');
  });

  it('takes the median of any list as the middle of its sorted values', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1 }), (xs) => {
        const m = median(xs);
        expect(xs.filter((x) => x < m).length).toBeLessThanOrEqual(xs.length / 2);
        expect(xs.filter((x) => x > m).length).toBeLessThanOrEqual(xs.length / 2);
      }),
    );
  });
});
