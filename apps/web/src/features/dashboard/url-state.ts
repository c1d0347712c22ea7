import type { DashboardRequest, TimeRange } from '../../api/types';
import { completeFilters } from '../../lib/filter-fields';
import { DEFAULT_VIEW, TIME_RANGE_LABELS, traceViewCodec, type TraceView } from '../../lib/trace-view';
import { keyOf, type UrlCodec } from '../../lib/url-codec';

/**
 * The dashboard's window, a time range (all time excepted: its buckets would span years), and which traces it
 * counts: the traces page's search, status, filters and experiment runs, written in the URL as the traces page
 * writes them, so that a link moves between the two pages with them.
 */
export type DashboardView = { range: Exclude<TimeRange, 'na'> } & Pick<
  TraceView,
  'search' | 'status' | 'filters' | 'experiments'
>;

export const dashboardCodec: UrlCodec<DashboardView> = {
  parse: (params) => {
    const range = keyOf(TIME_RANGE_LABELS, params.get('range'), '7d');
    const { search, status, filters, experiments } = traceViewCodec.parse(params);
    return { range: range === 'na' ? '7d' : range, search, status, filters, experiments };
  },
  write: ({ range, search, status, filters, experiments }) => {
    const params = traceViewCodec.write({ ...DEFAULT_VIEW, search, status, filters, experiments });
    params.set('range', range);
    return params;
  },
};

export const requestFromView = (view: DashboardView, projectUuid: string): DashboardRequest => ({
  project_uuid: projectUuid,
  time_range: view.range,
  status: view.status || null,
  search: view.search.trim() || null,
  // A filter still incomplete (a hand-edited link) is not sent, as on the traces page.
  filters: completeFilters(view.filters),
  include_experiments: view.experiments,
});
