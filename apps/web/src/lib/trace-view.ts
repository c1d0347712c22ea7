import type { TimeRange, TraceRowsRequest, TraceSort } from '../api/types';
import { filterOf, incomplete, isOperator, type FilterCondition } from './filter-fields';
import { isKey, keyOf, readPage, type UrlCodec } from './url-codec';

/** The statuses a view narrows to, '' for any; the traces page and the dashboard offer the same. */
const STATUS_LABELS = { '': 'Any status', success: 'Success', error: 'Error' } as const;
export const STATUS_OPTIONS = Object.entries(STATUS_LABELS).map(([value, label]) => ({ value, label }));
export const statusOf = (value: string | null) => keyOf(STATUS_LABELS, value, '');

/** Everything that decides which traces the table shows. It lives in the URL, so a link reproduces it. */
export type TraceView = {
  search: string;
  sort: TraceSort;
  status: keyof typeof STATUS_LABELS;
  range: TimeRange;
  page: number;
  pageSize: number;
  /** Conditions that must all hold, in the order they were added. */
  filters: FilterCondition[];
  /** Whether traces logged by experiment runs are listed beside production's. */
  experiments: boolean;
};

export const PAGE_SIZES = [50, 100, 250, 500] as const;
export const DEFAULT_VIEW: TraceView = {
  search: '',
  sort: 'newest',
  status: '',
  range: 'na',
  page: 1,
  pageSize: 100,
  filters: [],
  experiments: false,
};

export const SORT_LABELS = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  slowest: 'Slowest first',
  fastest: 'Fastest first',
  costliest: 'Costliest first',
  cheapest: 'Cheapest first',
  most_tokens: 'Most tokens first',
  fewest_tokens: 'Fewest tokens first',
  name_asc: 'Name, A to Z',
  name_desc: 'Name, Z to A',
  best_feedback: 'Best feedback first',
  worst_feedback: 'Worst feedback first',
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

export const isTimeRange = (s: string): s is TimeRange => isKey(TIME_RANGE_LABELS, s);

/** The filter condition of `filter`, `key`, `op` and `value` (the traces page's, and an experiment's samples'). */
export function readFilter(params: URLSearchParams): FilterCondition | null {
  const field = params.get('filter');
  const op = params.get('op');
  const key = params.get('key');
  const value = params.get('value');
  if (!field || !isOperator(op)) return null;
  // An empty key or value is none, as `writeFilter` leaves them out.
  return { field, operator: op, ...(key ? { key } : {}), ...(value ? { value } : {}) };
}

export function writeFilter(params: URLSearchParams, filter: FilterCondition | null) {
  if (!filter) return;
  params.set('filter', filter.field);
  if (filter.key) params.set('key', filter.key);
  params.set('op', filter.operator);
  if (filter.value) params.set('value', filter.value);
}

/**
 * The traces page's filters: each `filter` entry a JSON array `[field, operator, value?, key?]`. A link of
 * old, with one bare `filter` field beside `op`, `key` and `value`, reads as its one filter.
 */
function readFilters(params: URLSearchParams): FilterCondition[] {
  const filters: FilterCondition[] = [];
  for (const entry of params.getAll('filter')) {
    if (!entry.startsWith('[')) continue;
    const condition = conditionOfEntry(entry);
    if (condition) filters.push(condition);
  }
  const single = readFilter(params);
  return single && !single.field.startsWith('[') ? [single, ...filters] : filters;
}

function conditionOfEntry(entry: string): FilterCondition | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(entry);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) return null;
  const [field, op, value, key] = parsed as string[];
  if (!field || !isOperator(op ?? null)) return null;
  return { field, operator: op as FilterCondition['operator'], ...(key ? { key } : {}), ...(value ? { value } : {}) };
}

const entryOf = (c: FilterCondition) =>
  JSON.stringify(
    c.key
      ? [c.field, c.operator, c.value ?? '', c.key]
      : c.value
        ? [c.field, c.operator, c.value]
        : [c.field, c.operator],
  );

function viewFromParams(params: URLSearchParams): TraceView {
  const size = Number(params.get('size'));
  return {
    search: params.get('q') ?? '',
    sort: keyOf(SORT_LABELS, params.get('sort'), DEFAULT_VIEW.sort),
    status: statusOf(params.get('status')),
    range: keyOf(TIME_RANGE_LABELS, params.get('range'), DEFAULT_VIEW.range),
    page: readPage(params),
    pageSize: PAGE_SIZES.find((n) => n === size) ?? DEFAULT_VIEW.pageSize,
    filters: readFilters(params),
    experiments: params.get('experiments') === '1',
  };
}

function paramsFromView(view: TraceView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.search) params.set('q', view.search);
  if (view.sort !== DEFAULT_VIEW.sort) params.set('sort', view.sort);
  if (view.status) params.set('status', view.status);
  if (view.range !== DEFAULT_VIEW.range) params.set('range', view.range);
  for (const f of view.filters) params.append('filter', entryOf(f));
  if (view.experiments) params.set('experiments', '1');
  if (view.pageSize !== DEFAULT_VIEW.pageSize) params.set('size', String(view.pageSize));
  if (view.page > 1) params.set('page', String(view.page));
  return params;
}

export const traceViewCodec: UrlCodec<TraceView> = { parse: viewFromParams, write: paramsFromView };

export function requestFromView(view: TraceView, projectUuid: string): TraceRowsRequest {
  return {
    project_uuid: projectUuid,
    page: view.page,
    page_size: view.pageSize,
    time_range: view.range,
    status: view.status || null,
    search: view.search.trim() || null,
    sort: view.sort,
    // A filter still incomplete (a hand-edited link) is not sent.
    filters: view.filters.filter((f) => !incomplete(f)).map(filterOf),
    include_experiments: view.experiments,
  };
}

/**
 * Whether a new root trace belongs at the top of this view: a trace that just started is inside every time
 * range, comes first newest first, and its status is on the row; a search, a filter or another order is the
 * server's to judge (null: unknown until a refetch).
 */
export function liveRowFits(
  view: TraceView,
  row: { status: string | null; experiment_uuid?: string | null },
): boolean | null {
  if (view.status && row.status !== view.status) return false;
  if (!view.experiments && row.experiment_uuid) return false;
  return view.search.trim() || view.filters.length || view.sort !== 'newest' ? null : true;
}

/** Each time range's length: hours, or calendar months (as PostgreSQL's intervals, which the listing uses). */
const RANGE_LENGTH: Record<Exclude<TimeRange, 'na'>, { hours: number } | { months: number }> = {
  '1h': { hours: 1 },
  '3h': { hours: 3 },
  '6h': { hours: 6 },
  '24h': { hours: 24 },
  '7d': { hours: 7 * 24 },
  '1m': { months: 1 },
  '3m': { months: 3 },
  '6m': { months: 6 },
  '1y': { months: 12 },
};

/** Where a time range ending `now` begins; null for all time. */
export function rangeStart(range: TimeRange, now: Date): Date | null {
  if (range === 'na') return null;
  const length = RANGE_LENGTH[range];
  const start = new Date(now);
  if ('hours' in length) start.setTime(now.getTime() - length.hours * 3_600_000);
  else start.setUTCMonth(start.getUTCMonth() - length.months);
  return start;
}

/**
 * The view's conditions as filters that must all hold (a sample for an annotation queue): its filters, its
 * status, and its time range as a start bound at `now`. A search has no such filter: it is left out, and the
 * caller says so.
 */
export function filtersFromView(view: TraceView, now: Date): FilterCondition[] {
  const filters: FilterCondition[] = [];
  filters.push(...view.filters.filter((f) => !incomplete(f)));
  if (view.status) filters.push({ field: 'status', operator: 'equals', value: view.status });
  const start = rangeStart(view.range, now);
  if (start)
    filters.push({
      field: 'start_timestamp',
      operator: 'greater_than_or_equal',
      // The filter's own format (UTC), as its input asks for it.
      value: start.toISOString().slice(0, 19).replace('T', ' '),
    });
  return filters;
}
