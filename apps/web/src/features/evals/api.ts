import { queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { evalMetricKeys } from '../../api/eval-metrics';
import type {
  EvalMetric,
  EvalMetricCreate,
  EvalMetricTry,
  EvalMetricUpdate,
  EvalMetricVersion,
  EvalResult,
} from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

// Under the metrics' own key, so that a write, invalidating the metrics, reads the versions again too.
const versionKeys = { of: (id: number) => [...evalMetricKeys.all, id, 'versions'] as const };

const versionsQueryOptions = (id: number) =>
  queryOptions({
    queryKey: versionKeys.of(id),
    queryFn: ({ signal }) => api<EvalMetricVersion[]>(`/eval-metrics/${id}/versions`, { signal }),
  });

/** A metric's versions, newest first, each with the configuration it had. */
export const useEvalMetricVersions = (id: number) => useQuery(versionsQueryOptions(id));

export const useCreateEvalMetric = () =>
  useInvalidatingMutation(evalMetricKeys.all, (body: EvalMetricCreate) =>
    api<EvalMetric>('/eval-metrics', { method: 'POST', body }),
  );

/** Saves a metric's new configuration as its next version (the versions before are kept). */
export const useUpdateEvalMetric = (id: number) =>
  useInvalidatingMutation(evalMetricKeys.all, (body: EvalMetricUpdate) =>
    api<EvalMetric>(`/eval-metrics/${id}`, { method: 'PATCH', body }),
  );

export const useDeleteEvalMetric = () =>
  useInvalidatingMutation(evalMetricKeys.all, (id: number) => api(`/eval-metrics/${id}`, { method: 'DELETE' }));

/** Scores an example with a metric as the form describes it: nothing changes on the server. */
export const useTryEvalMetric = () =>
  useMutation({ mutationFn: (body: EvalMetricTry) => api<EvalResult>('/eval-metrics/try', { method: 'POST', body }) });
