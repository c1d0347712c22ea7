import { useMutation } from '@tanstack/react-query';
import { api } from '../../api/client';
import { evalMetricKeys } from '../../api/eval-metrics';
import type { EvalMetric, EvalMetricCreate, EvalMetricTry, EvalResult } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

export const useCreateEvalMetric = () =>
  useInvalidatingMutation(evalMetricKeys.all, (body: EvalMetricCreate) =>
    api<EvalMetric>('/eval-metrics', { method: 'POST', body }),
  );

export const useDeleteEvalMetric = () =>
  useInvalidatingMutation(evalMetricKeys.all, (id: number) => api(`/eval-metrics/${id}`, { method: 'DELETE' }));

/** Scores an example with a metric not saved yet: nothing changes on the server. */
export const useTryEvalMetric = () =>
  useMutation({ mutationFn: (body: EvalMetricTry) => api<EvalResult>('/eval-metrics/try', { method: 'POST', body }) });
