import type { TimeRange, TraceRowsRequest, TraceSort } from '../api/types';
import { incomplete, isOperator, type FilterCondition } from './filter-fields';

/** Everything that decides which traces the table shows. It lives in the URL, so a link reproduces it. */
export type TraceView = {
  search: string;
  sort: TraceSort;
  status: '' | 'success' | 'error';
  range: TimeRange;
  page: number;
  pageSize: number;
  filter: FilterCondition | null;
};

export const PAGE_SIZES = [50, 100, 250, 500] as const;
export const DEFAULT_VIEW: TraceView = {
  search: '',
  sort: 'newest',
  status: '',
  range: 'na',
  page: 1,
  pageSize: 100,
  filter: null,
};

export const SORT_LABELS = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  slowest: 'Slowest first',
} satisfies Record<TraceSort, string>;

export const TIME_RANGE_LABELS = {
  na: 'All time',
  '1h': 'Last hour',
  '3h': 'Last 3 hours',
  '6h': 'Last 6 hours',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '1m': 'Last month',
  '3m': 'Last 3 months',
  '6m': 'Last 6 months',
  '1y': 'Last year',
} satisfies Record<TimeRange, string>;

const isRange = (s: string | null): s is TimeRange => !!s && s in TIME_RANGE_LABELS;

export function viewFromParams(params: URLSearchParams): TraceView {
  const status = params.get('status');
  const page = Number(params.get('page'));
  const size = Number(params.get('size'));
  const field = params.get('filter');
  const op = params.get('op');
  return {
    search: params.get('q') ?? '',
    sort: (params.get('sort') ?? '') in SORT_LABELS ? (params.get('sort') as TraceSort) : DEFAULT_VIEW.sort,
    status: status === 'success' || status === 'error' ? status : '',
    range: isRange(params.get('range')) ? (params.get('range') as TimeRange) : DEFAULT_VIEW.range,
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    pageSize: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_VIEW.pageSize,
    filter:
      field && isOperator(op)
        ? {
            field,
            operator: op,
            ...(params.has('key') && { key: params.get('key')! }),
            ...(params.has('value') && { value: params.get('value')! }),
          }
        : null,
  };
}

/** Only what differs from the defaults is written, so that plain views keep short links. */
export function paramsFromView(view: TraceView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.search) params.set('q', view.search);
  if (view.sort !== DEFAULT_VIEW.sort) params.set('sort', view.sort);
  if (view.status) params.set('status', view.status);
  if (view.range !== DEFAULT_VIEW.range) params.set('range', view.range);
  if (view.filter) {
    params.set('filter', view.filter.field);
    if (view.filter.key) params.set('key', view.filter.key);
    params.set('op', view.filter.operator);
    if (view.filter.value) params.set('value', view.filter.value);
  }
  if (view.pageSize !== DEFAULT_VIEW.pageSize) params.set('size', String(view.pageSize));
  if (view.page > 1) params.set('page', String(view.page));
  return params;
}

export function requestFromView(view: TraceView, projectUuid: string): TraceRowsRequest {
  const filter = view.filter && !incomplete(view.filter) ? view.filter : null;
  return {
    project_uuid: projectUuid,
    page: view.page,
    page_size: view.pageSize,
    time_range: view.range,
    status: view.status || null,
    search: view.search.trim() || null,
    sort: view.sort,
    filter_field: filter?.field ?? null,
    filter_operator: filter?.operator ?? null,
    filter_value: filter?.value ?? null,
    filter_key: filter?.key ?? null,
  };
}

/**
 * Whether a new root trace belongs at the top of this view: a trace that just started is inside every time
 * range, comes first newest first, and its status is on the row; a search, a filter or another order is the
 * server's to judge (null: unknown until a refetch).
 */
export function liveRowFits(view: TraceView, row: { status: string | null }): boolean | null {
  if (view.status && row.status !== view.status) return false;
  return view.search.trim() || view.filter || view.sort !== 'newest' ? null : true;
}
