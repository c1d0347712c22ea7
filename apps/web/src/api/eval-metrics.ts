import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { EvalMetric, EvalResult } from './types';

export const evalMetricKeys = {
  all: ['eval-metrics'] as const,
  spanResults: (traceId: string) => ['eval-results', traceId] as const,
};

const evalMetricsQueryOptions = queryOptions({
  queryKey: evalMetricKeys.all,
  queryFn: ({ signal }) => api<EvalMetric[]>('/eval-metrics', { signal }),
});

/** The organization's metrics (the metrics page, and the rules that run them on a project's traces). */
export const useEvalMetrics = () => useQuery(evalMetricsQueryOptions);

const spanEvalResultsQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: evalMetricKeys.spanResults(traceId),
    queryFn: ({ signal }) => api<Record<string, EvalResult>>(`/span/${traceId}/eval-results`, { signal }),
  });

/** A span's evaluation results by metric name, each with the version of the metric that made it. */
export const useSpanEvalResults = (traceId: string) => useQuery(spanEvalResultsQueryOptions(traceId));
