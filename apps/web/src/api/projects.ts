import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { ProjectSummary } from './types';

const projectKeys = { all: ['projects'] as const };

const projectsQueryOptions = queryOptions({
  queryKey: projectKeys.all,
  queryFn: ({ signal }) => api<ProjectSummary[]>('/projects', { signal }),
  refetchInterval: 30_000,
});

/** The organization's projects, with their activity (the projects page, and each project's name elsewhere). */
export const useProjects = () => useQuery(projectsQueryOptions);
