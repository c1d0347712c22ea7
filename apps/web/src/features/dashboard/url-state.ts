import type { TimeRange } from '../../api/types';
import { TIME_RANGE_LABELS } from '../../lib/trace-view';
import { keyOf, type UrlCodec } from '../../lib/url-codec';

/** The dashboard's window: a time range, all time excepted (its buckets would span years). */
export type DashboardView = { range: Exclude<TimeRange, 'na'> };

export const dashboardCodec: UrlCodec<DashboardView> = {
  parse: (params) => {
    const range = keyOf(TIME_RANGE_LABELS, params.get('range'), '7d');
    return { range: range === 'na' ? '7d' : range };
  },
  write: ({ range }) => new URLSearchParams({ range }),
};
