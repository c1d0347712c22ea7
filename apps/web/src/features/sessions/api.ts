import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type { TimeRange, TraceGroup, TraceGroups, TraceGroupsRequest } from '../../api/types';

/** `time_range` left out: all time. */
type GroupRequest = { project_uuid: string; by: 'session' | 'user'; key: string | null; time_range?: TimeRange };

const groupKeys = {
  all: ['trace-groups'] as const,
  list: (request: TraceGroupsRequest) => [...groupKeys.all, 'list', request] as const,
  detail: (request: GroupRequest) => [...groupKeys.all, 'detail', request] as const,
};

const groupsQueryOptions = (request: TraceGroupsRequest) =>
  queryOptions({
    queryKey: groupKeys.list(request),
    queryFn: ({ signal }) => api<TraceGroups>('/trace-groups', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });

const groupQueryOptions = (request: GroupRequest) =>
  queryOptions({
    queryKey: groupKeys.detail(request),
    queryFn: ({ signal }) => api<TraceGroup>('/trace-group', { method: 'POST', body: request, signal }),
    enabled: !!request.key,
  });

/** A project's traces grouped by session or by user, a page of groups at a time. */
export const useTraceGroups = (request: TraceGroupsRequest) => useQuery(groupsQueryOptions(request));

/** One group's traces in order: a conversation. */
export const useTraceGroup = (request: GroupRequest) => useQuery(groupQueryOptions(request));
