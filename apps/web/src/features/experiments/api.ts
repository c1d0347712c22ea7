import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type {
  CompareRequest,
  CompareResult,
  CompareRows,
  CompareRowsRequest,
  ExperimentListRequest,
  ExperimentSamples,
  ExperimentSamplesRequest,
  ExperimentSummary,
} from '../../api/types';

const experimentKeys = {
  all: ['experiments'] as const,
  list: (request: ExperimentListRequest) => [...experimentKeys.all, 'list', request] as const,
  samples: (uuid: string, request: ExperimentSamplesRequest) =>
    [...experimentKeys.all, uuid, 'samples', request] as const,
  compare: (request: CompareRequest) => [...experimentKeys.all, 'compare', request] as const,
  compareRows: (request: CompareRowsRequest) => [...experimentKeys.all, 'compare-rows', request] as const,
};

const experimentsQueryOptions = (request: ExperimentListRequest) =>
  queryOptions({
    queryKey: experimentKeys.list(request),
    queryFn: ({ signal }) =>
      api<{ results: ExperimentSummary[] }>('/experiments/summaries', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
    // Running experiments gain samples as their traces arrive.
    refetchInterval: 15_000,
  });

const samplesQueryOptions = (uuid: string, request: ExperimentSamplesRequest) =>
  queryOptions({
    queryKey: experimentKeys.samples(uuid, request),
    queryFn: ({ signal }) =>
      api<ExperimentSamples>(`/experiment/${uuid}/samples`, { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });

const compareQueryOptions = (request: CompareRequest) =>
  queryOptions({
    queryKey: experimentKeys.compare(request),
    queryFn: ({ signal }) => api<CompareResult>('/experiments/compare', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });

const compareRowsQueryOptions = (request: CompareRowsRequest) =>
  queryOptions({
    queryKey: experimentKeys.compareRows(request),
    queryFn: ({ signal }) => api<CompareRows>('/experiments/compare/rows', { method: 'POST', body: request, signal }),
    placeholderData: keepPreviousData,
  });

export const useExperiments = (request: ExperimentListRequest) => useQuery(experimentsQueryOptions(request));

/** One experiment's samples (a test case run each), filtered and paged, with its scores summarized. */
export const useExperimentSamples = (uuid: string, request: ExperimentSamplesRequest) =>
  useQuery(samplesQueryOptions(uuid, request));

/** The metrics of 2 to 5 experiments against a baseline. */
export const useCompare = (request: CompareRequest) => useQuery(compareQueryOptions(request));

/** A page of the compared experiments' test cases, side by side. */
export const useCompareRows = (request: CompareRowsRequest) => useQuery(compareRowsQueryOptions(request));
