import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { traceKeys } from '../../api/traces';
import type { TraceRows, TraceRowsRequest } from '../../api/types';

const tracesQueryOptions = (request: TraceRowsRequest) =>
  queryOptions({
    queryKey: traceKeys.list(request),
    queryFn: ({ signal }) => api<TraceRows>('/traces', { method: 'POST', body: request, signal }),
    // The table keeps showing the previous page while the next loads, instead of flashing empty.
    placeholderData: keepPreviousData,
  });

export const useTraces = (request: TraceRowsRequest) => useQuery(tracesQueryOptions(request));
