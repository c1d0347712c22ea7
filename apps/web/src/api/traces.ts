import { queryOptions, useQueries } from '@tanstack/react-query';
import { api } from './client';
import type { Span, TraceRowsRequest } from './types';

/** Query keys of traces: the traces page's lists, a trace's skeleton, a span with all its fields. */
export const traceKeys = {
  all: ['traces'] as const,
  list: (request: TraceRowsRequest) => [...traceKeys.all, 'list', request] as const,
  skeleton: (traceId: string) => [...traceKeys.all, 'skeleton', traceId] as const,
  span: (traceId: string) => [...traceKeys.all, 'span', traceId] as const,
};

/** One span (the trace page's selection, or a root added to a dataset): remarks are written to it. */
export const spanQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: traceKeys.span(traceId),
    queryFn: ({ signal }) => api<Span>(`/span/${traceId}`, { signal }),
    staleTime: 30_000,
  });

/** Several spans at once, each cached as the trace page caches it. */
export const useSpans = (traceIds: string[]) => useQueries({ queries: traceIds.map((id) => spanQueryOptions(id)) });
