import { queryOptions, useQueries, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { Span, TraceRowsRequest, TraceSearch, TraceSkeleton } from './types';

/**
 * Query keys of traces: the traces page's lists, a trace's skeleton and a search in it, a span with all its fields,
 * an export's progress.
 */
export const traceKeys = {
  all: ['traces'] as const,
  list: (request: TraceRowsRequest) => [...traceKeys.all, 'list', request] as const,
  count: (request: TraceRowsRequest) => [...traceKeys.all, 'count', request] as const,
  skeleton: (traceId: string) => [...traceKeys.all, 'skeleton', traceId] as const,
  span: (traceId: string) => [...traceKeys.all, 'span', traceId] as const,
  search: (traceId: string, text: string) => [...traceKeys.all, 'search', traceId, text] as const,
  exportProgress: (exportId: string) => [...traceKeys.all, 'export', exportId] as const,
};

const skeletonQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: traceKeys.skeleton(traceId),
    queryFn: ({ signal }) => api<TraceSkeleton>(`/trace/${traceId}/skeleton`, { signal }),
  });

/** One span (the trace page's selection, or a root added to a dataset): remarks are written to it. */
const spanQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: traceKeys.span(traceId),
    queryFn: ({ signal }) => api<Span>(`/span/${traceId}`, { signal }),
    staleTime: 30_000,
  });

/** Every span of a trace with the fields the tree and the timeline draw (the trace page, a review's item). */
export const useTraceSkeleton = (traceId: string) => useQuery(skeletonQueryOptions(traceId));

/** The selected span with all its fields; none while nothing is selected. */
export const useSpan = (traceId: string | null) => useQuery({ ...spanQueryOptions(traceId ?? ''), enabled: !!traceId });

/** Several spans at once, each cached as the trace page caches it. */
export const useSpans = (traceIds: string[]) => useQueries({ queries: traceIds.map((id) => spanQueryOptions(id)) });

/** The spans of a trace whose name or payloads contain `text` (found by the server); none while it is empty. */
export const useTraceSearch = (traceId: string, text: string) =>
  useQuery({
    queryKey: traceKeys.search(traceId, text),
    queryFn: ({ signal }) => api<TraceSearch>(`/trace/${traceId}/search?${new URLSearchParams({ text })}`, { signal }),
    enabled: text !== '',
    staleTime: 30_000,
  });
