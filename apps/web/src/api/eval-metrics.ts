import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { EvalMetric } from './types';

export const evalMetricKeys = { all: ['eval-metrics'] as const };

const evalMetricsQueryOptions = queryOptions({
  queryKey: evalMetricKeys.all,
  queryFn: ({ signal }) => api<EvalMetric[]>('/eval-metrics', { signal }),
});

/** The organization's metrics (the metrics page, and the rules that run them on a project's traces). */
export const useEvalMetrics = () => useQuery(evalMetricsQueryOptions);
