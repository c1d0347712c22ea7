import { useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { ExperimentSummary } from './types';

/**
 * One experiment by its uuid (the run a trace belongs to, named in the trace's header); none while the
 * uuid is null. Under the experiments feature's `['experiments']` keys, so that its writes refresh it.
 */
export const useExperiment = (uuid: string | null) =>
  useQuery({
    queryKey: ['experiments', 'one', uuid],
    queryFn: async ({ signal }) =>
      (
        await api<{ results: ExperimentSummary[] }>('/experiments/summaries', {
          method: 'POST',
          body: { experiment_uuids: [uuid] },
          signal,
        })
      ).results[0] ?? null,
    enabled: uuid !== null,
    staleTime: 30_000,
  });
