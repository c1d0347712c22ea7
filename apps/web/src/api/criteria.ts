import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { Criterion } from './types';

export const criterionKeys = { all: ['annotation-criteria'] as const };

const criteriaQueryOptions = queryOptions({
  queryKey: criterionKeys.all,
  queryFn: ({ signal }) => api<Criterion[]>('/annotation-criteria', { signal }),
  staleTime: 60_000,
});

/** What spans are annotated by (a span's remarks, and the settings that manage them). */
export const useCriteria = () => useQuery(criteriaQueryOptions);
