import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type { Dashboard, DashboardRequest } from '../../api/types';

const dashboardKeys = {
  all: ['dashboard'] as const,
  of: (request: DashboardRequest) => [...dashboardKeys.all, request] as const,
};

const dashboardQueryOptions = (request: DashboardRequest) =>
  queryOptions({
    queryKey: dashboardKeys.of(request),
    queryFn: ({ signal }) => api<Dashboard>('/dashboard', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });

export const useDashboard = (request: DashboardRequest) => useQuery(dashboardQueryOptions(request));
