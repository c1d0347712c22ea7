import { infiniteQueryOptions, useInfiniteQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { datasetKeys } from '../../api/datasets';
import type { TestCaseDraft, TestCasePage } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const TEST_CASE_PAGE = 500;

const testCasesQueryOptions = (datasetId: number) =>
  infiniteQueryOptions({
    queryKey: datasetKeys.testCases(datasetId),
    queryFn: ({ pageParam, signal }) =>
      api<TestCasePage>(`/datasets/${datasetId}/test_cases?page=${pageParam}&page_size=${TEST_CASE_PAGE}`, {
        signal,
      }),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.page_size < last.total ? last.page + 1 : undefined),
  });

/** A dataset's test cases, a page at a time as the table scrolls. */
export const useTestCases = (datasetId: number) => useInfiniteQuery(testCasesQueryOptions(datasetId));

// Every change below reads all dataset queries again: a dataset's counts and dates change with its cases.

export const useCreateDataset = () =>
  useInvalidatingMutation(datasetKeys.all, (body: { name: string; column_names: string[] }) =>
    api<{ id: number }>('/collection', { method: 'POST', body: { ...body, test_cases: [] } }),
  );

export const useRenameDataset = (id: number) =>
  useInvalidatingMutation(datasetKeys.all, (name: string) =>
    api(`/datasets/${id}`, { method: 'PATCH', body: { name } }),
  );

export const useDeleteDataset = (id: number) =>
  useInvalidatingMutation(datasetKeys.all, () => api(`/datasets/${id}`, { method: 'DELETE' }));

export const useUpdateTestCase = (datasetId: number) =>
  useInvalidatingMutation(datasetKeys.all, ({ id, ...body }: TestCaseDraft & { id: number }) =>
    api(`/update_test_case/${datasetId}/${id}`, { method: 'POST', body }),
  );

export const useDeleteTestCase = (datasetId: number) =>
  useInvalidatingMutation(datasetKeys.all, (id: number) =>
    api(`/datasets/${datasetId}/test_cases/${id}`, { method: 'DELETE' }),
  );

export const useImportTestCases = (datasetId: number) =>
  useInvalidatingMutation(datasetKeys.all, (body: { format: 'csv' | 'jsonl'; content: string }) =>
    api<{ imported: number }>(`/datasets/${datasetId}/import`, { method: 'POST', body }),
  );
