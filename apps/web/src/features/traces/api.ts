import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { traceKeys } from '../../api/traces';
import type { TraceCount, TraceRows, TraceRowsRequest } from '../../api/types';

const tracesQueryOptions = (request: TraceRowsRequest) =>
  queryOptions({
    queryKey: traceKeys.list(request),
    queryFn: ({ signal }) => api<TraceRows>('/traces', { method: 'POST', body: request, signal }),
    // The table keeps showing the previous page while the next loads, instead of flashing empty.
    placeholderData: keepPreviousData,
  });

/** A page of the traces table, without waiting for the count of every matching trace (useTraceCount). */
export const useTraces = (request: TraceRowsRequest) => useQuery(tracesQueryOptions({ ...request, count: false }));

/**
 * How many traces the table's request matches, asked apart from its pages: a page with several filters comes
 * back in milliseconds while counting can take most of a second, and one count serves every page and order.
 * Asked only when the page does not tell (`enabled`).
 */
export function useTraceCount(request: TraceRowsRequest, enabled: boolean) {
  const {
    page: _page,
    page_size: _size,
    sort: _sort,
    content: _content,
    metadata_keys: _keys,
    count: _count,
    ...counted
  } = request;
  return useQuery({
    queryKey: traceKeys.count(counted),
    queryFn: ({ signal }) => api<TraceCount>('/traces/count', { method: 'POST', body: counted, signal }),
    enabled,
  });
}
