import { describe, expect, it } from 'vitest';
import { isTimeRange, TIME_RANGE_LABELS } from '../../lib/trace-view';
import { dashboardCodec } from './url-state';

describe("the dashboard's range in the URL", () => {
  it('round-trips every range but all time', () => {
    const ranges = Object.keys(TIME_RANGE_LABELS).filter(isTimeRange);
    for (const range of ranges)
      if (range !== 'na')
        expect(dashboardCodec.parse(new URLSearchParams(dashboardCodec.write({ range }).toString()))).toEqual({
          range,
        });
  });

  it('reads all time, or an unknown range, as the last 7 days', () => {
    for (const junk of ['range=na', 'range=2w', 'range=toString', ''])
      expect(dashboardCodec.parse(new URLSearchParams(junk))).toEqual({ range: '7d' });
  });
});
