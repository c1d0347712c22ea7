import { queryOptions, useQuery } from '@tanstack/react-query';
import { useInvalidatingMutation } from '../lib/react-query';
import { api } from './client';
import type { DatasetSummary, TestCaseDraft } from './types';

/** Every dataset query starts with `all`: a change to one dataset reads them all again (counts and dates change). */
export const datasetKeys = {
  all: ['datasets'] as const,
  list: () => [...datasetKeys.all, 'list'] as const,
  testCases: (datasetId: number) => [...datasetKeys.all, datasetId, 'test-cases'] as const,
};

const datasetsQueryOptions = queryOptions({
  queryKey: datasetKeys.list(),
  queryFn: ({ signal }) => api<{ results: DatasetSummary[] }>('/datasets', { signal }),
  select: (d) => d.results,
});

/** The organization's datasets (the datasets pages, and "Add to dataset" on the trace pages). */
export const useDatasets = () => useQuery(datasetsQueryOptions);

export const useAddTestCases = () =>
  useInvalidatingMutation(datasetKeys.all, ({ datasetId, cases }: { datasetId: number; cases: TestCaseDraft[] }) =>
    api<number[]>('/testcases', { method: 'POST', body: { id: datasetId, test_cases: cases } }),
  );
