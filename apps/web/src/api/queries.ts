import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { api } from './client';
import { useSession } from './session';
import type {
  ApiKey,
  ApiKeyCreated,
  CompareRequest,
  CompareResult,
  CompareRows,
  Criterion,
  CriterionCreate,
  Dashboard,
  DashboardRequest,
  DatasetSummary,
  Deployment,
  EvalMetric,
  EvalMetricCreate,
  EvalMetricTry,
  EvalResult,
  ExperimentListRequest,
  ExperimentSamples,
  ExperimentSamplesRequest,
  ExperimentSummary,
  ProjectSummary,
  PromptVersion,
  PromptVersionCreate,
  ProviderKey,
  Role,
  Span,
  TraceGroup,
  TraceGroups,
  TraceGroupsRequest,
  TraceRows,
  TraceRowsRequest,
  TestCaseDraft,
  TestCasePage,
  TraceSkeleton,
  WhoAmI,
} from './types';

// Server state of the console, one hook per resource. Query keys start with the resource's name so that
// a mutation can invalidate what it changed.

export function useMe() {
  const { apiKey } = useSession();
  return useQuery({
    queryKey: ['me', apiKey],
    queryFn: () => api<WhoAmI>('/me'),
    enabled: !!apiKey,
    staleTime: 60_000,
  });
}

/** Checks a key before it becomes the session's (the sign-in page). */
export const checkKey = (apiKey: string) => api<WhoAmI>('/me', { apiKey });

export function useProjects() {
  return useQuery({
    queryKey: ['projects'],
    queryFn: () => api<ProjectSummary[]>('/projects'),
    refetchInterval: 30_000,
  });
}

export function useTraces(request: TraceRowsRequest) {
  return useQuery({
    queryKey: ['traces', request],
    queryFn: ({ signal }) => api<TraceRows>('/traces', { method: 'POST', body: request, signal }),
    // The table keeps showing the previous page while the next loads, instead of flashing empty.
    placeholderData: keepPreviousData,
  });
}

export function useTraceSkeleton(traceId: string) {
  return useQuery({
    queryKey: ['skeleton', traceId],
    queryFn: ({ signal }) => api<TraceSkeleton>(`/trace/${traceId}/skeleton`, { signal }),
  });
}

export function useSpan(traceId: string | null) {
  return useQuery({
    queryKey: ['span', traceId],
    queryFn: ({ signal }) => api<Span>(`/span/${traceId}`, { signal }),
    enabled: !!traceId,
    staleTime: 30_000,
  });
}

export function useApiKeys() {
  return useQuery({ queryKey: ['api-keys'], queryFn: () => api<ApiKey[]>('/api-keys') });
}

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { role: Role; label: string }) => api<ApiKeyCreated>('/api-keys', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useRevokeApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<unknown>(`/api-keys/${id}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useProviderKeys() {
  return useQuery({ queryKey: ['provider-keys'], queryFn: () => api<ProviderKey[]>('/provider-keys') });
}

export function useSaveProviderKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { provider: string; api_key: string; base_url?: string | null }) =>
      api<ProviderKey>('/provider-keys', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['provider-keys'] }),
  });
}

export function useDeleteProviderKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (provider: string) =>
      api<unknown>(`/provider-keys/${encodeURIComponent(provider)}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['provider-keys'] }),
  });
}

export function useCriteria() {
  return useQuery({
    queryKey: ['annotation-criteria'],
    queryFn: () => api<Criterion[]>('/annotation-criteria'),
    staleTime: 60_000,
  });
}

export function useCreateCriterion() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CriterionCreate) => api<Criterion>('/annotation-criteria', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['annotation-criteria'] }),
  });
}

export function useDeleteCriterion() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<unknown>(`/annotation-criteria/${id}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['annotation-criteria'] }),
  });
}

/** Comments and annotations of one span: each write refetches the span, which holds them. */
export function useRemarks(traceId: string) {
  const client = useQueryClient();
  const onSuccess = () => client.invalidateQueries({ queryKey: ['span', traceId] });
  const base = `/trace_log/${traceId}`;
  return {
    addComment: useMutation({
      mutationFn: (comment: string) => api<unknown>(`${base}/comments`, { method: 'POST', body: { comment } }),
      onSuccess,
    }),
    deleteComment: useMutation({
      mutationFn: (id: string) => api<unknown>(`${base}/comments/${id}`, { method: 'DELETE' }),
      onSuccess,
    }),
    annotate: useMutation({
      mutationFn: ({ criterionId, body }: { criterionId: string; body: { score?: number; value?: string } }) =>
        api<unknown>(`${base}/annotations/${criterionId}`, { method: 'PUT', body }),
      onSuccess,
    }),
    unannotate: useMutation({
      mutationFn: (criterionId: string) => api<unknown>(`${base}/annotations/${criterionId}`, { method: 'DELETE' }),
      onSuccess,
    }),
  };
}

export function useDashboard(request: DashboardRequest) {
  return useQuery({
    queryKey: ['dashboard', request],
    queryFn: ({ signal }) => api<Dashboard>('/dashboard', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useTraceGroups(request: TraceGroupsRequest) {
  return useQuery({
    queryKey: ['trace-groups', request],
    queryFn: ({ signal }) => api<TraceGroups>('/trace-groups', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useTraceGroup(request: { project_uuid: string; by: 'session' | 'user'; key: string | null }) {
  return useQuery({
    queryKey: ['trace-group', request],
    queryFn: ({ signal }) => api<TraceGroup>('/trace-group', { method: 'POST', body: request, signal }),
    enabled: !!request.key,
  });
}

export function useExperiments(request: ExperimentListRequest) {
  return useQuery({
    queryKey: ['experiments', request],
    queryFn: ({ signal }) =>
      api<{ results: ExperimentSummary[] }>('/experiments/summaries', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
    // Running experiments gain samples as their traces arrive.
    refetchInterval: 15_000,
  });
}

export function useExperimentSamples(uuid: string, request: ExperimentSamplesRequest) {
  return useQuery({
    queryKey: ['experiment-samples', uuid, request],
    queryFn: ({ signal }) =>
      api<ExperimentSamples>(`/experiment/${uuid}/samples`, { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useCompare(request: CompareRequest) {
  return useQuery({
    queryKey: ['compare', request],
    queryFn: ({ signal }) => api<CompareResult>('/experiments/compare', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useCompareRows(request: CompareRequest & { page: number; page_size: number }) {
  return useQuery({
    queryKey: ['compare-rows', request],
    queryFn: ({ signal }) => api<CompareRows>('/experiments/compare/rows', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useDatasets() {
  return useQuery({
    queryKey: ['datasets'],
    queryFn: ({ signal }) => api<{ results: DatasetSummary[] }>('/datasets', { signal }),
    select: (d) => d.results,
  });
}

const TEST_CASE_PAGE = 500;

/** A dataset's test cases, a page at a time as the table scrolls. */
export function useTestCases(datasetId: number) {
  return useInfiniteQuery({
    queryKey: ['datasets', datasetId, 'test-cases'],
    queryFn: ({ pageParam, signal }) =>
      api<TestCasePage>(`/datasets/${datasetId}/test_cases?page=${pageParam}&page_size=${TEST_CASE_PAGE}`, { signal }),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.page * last.page_size < last.total ? last.page + 1 : undefined),
  });
}

/** A change to datasets: afterwards every dataset query is read again (counts and dates change too). */
function useDatasetMutation<V, T = unknown>(mutationFn: (v: V) => Promise<T>) {
  const client = useQueryClient();
  return useMutation({ mutationFn, onSuccess: () => client.invalidateQueries({ queryKey: ['datasets'] }) });
}

export const useCreateDataset = () =>
  useDatasetMutation((body: { name: string; column_names: string[] }) =>
    api<{ id: number }>('/collection', { method: 'POST', body: { ...body, test_cases: [] } }),
  );
export const useRenameDataset = (id: number) =>
  useDatasetMutation((name: string) => api(`/datasets/${id}`, { method: 'PATCH', body: { name } }));
export const useDeleteDataset = (id: number) => useDatasetMutation(() => api(`/datasets/${id}`, { method: 'DELETE' }));
export const useAddTestCases = () =>
  useDatasetMutation(({ datasetId, cases }: { datasetId: number; cases: TestCaseDraft[] }) =>
    api<number[]>('/testcases', { method: 'POST', body: { id: datasetId, test_cases: cases } }),
  );
export const useUpdateTestCase = (datasetId: number) =>
  useDatasetMutation(({ id, ...body }: TestCaseDraft & { id: number }) =>
    api(`/update_test_case/${datasetId}/${id}`, { method: 'POST', body }),
  );
export const useDeleteTestCase = (datasetId: number) =>
  useDatasetMutation((id: number) => api(`/datasets/${datasetId}/test_cases/${id}`, { method: 'DELETE' }));
export const useImportTestCases = (datasetId: number) =>
  useDatasetMutation((body: { format: 'csv' | 'jsonl'; content: string }) =>
    api<{ imported: number }>(`/datasets/${datasetId}/import`, { method: 'POST', body }),
  );

export function usePromptVersions() {
  return useQuery({ queryKey: ['prompts'], queryFn: ({ signal }) => api<PromptVersion[]>('/prompts', { signal }) });
}

export function useDeployments() {
  return useQuery({
    queryKey: ['deployments'],
    queryFn: ({ signal }) => api<Deployment[]>('/deployments', { signal }),
  });
}

export function useCreatePromptVersion() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: PromptVersionCreate) => api<PromptVersion>('/prompts', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['prompts'] }),
  });
}

export function useDeploy() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { prompt_version_id: number; deployment_id?: string | null }) =>
      api<Deployment>('/deployments', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['deployments'] }),
  });
}

export function useEvalMetrics() {
  return useQuery({
    queryKey: ['eval-metrics'],
    queryFn: ({ signal }) => api<EvalMetric[]>('/eval-metrics', { signal }),
  });
}

export function useCreateEvalMetric() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: EvalMetricCreate) => api<EvalMetric>('/eval-metrics', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['eval-metrics'] }),
  });
}

export function useDeleteEvalMetric() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api(`/eval-metrics/${id}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['eval-metrics'] }),
  });
}

export const useTryEvalMetric = () =>
  useMutation({ mutationFn: (body: EvalMetricTry) => api<EvalResult>('/eval-metrics/try', { method: 'POST', body }) });

/** Several spans at once (each cached as `useSpan` caches it). */
export function useSpans(traceIds: string[]) {
  return useQueries({
    queries: traceIds.map((id) => ({
      queryKey: ['span', id],
      queryFn: ({ signal }: { signal: AbortSignal }) => api<Span>(`/span/${id}`, { signal }),
      staleTime: 30_000,
    })),
  });
}
