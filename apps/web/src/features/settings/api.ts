import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiKeyKeys } from '../../api/api-keys';
import { api } from '../../api/client';
import { agreementKeys, criterionKeys, type CriterionPatch } from '../../api/criteria';
import type { Criterion, CriterionCreate, ProviderKey } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const settingsKeys = {
  apiKeys: apiKeyKeys.all,
  providerKeys: ['provider-keys'] as const,
};

const providerKeysQueryOptions = queryOptions({
  queryKey: settingsKeys.providerKeys,
  queryFn: ({ signal }) => api<ProviderKey[]>('/provider-keys', { signal }),
});

export const useRevokeApiKey = () =>
  useInvalidatingMutation(settingsKeys.apiKeys, (id: string) => api<unknown>(`/api-keys/${id}`, { method: 'DELETE' }));

/** The keys the completion gateway uses for this organization's calls, one per provider. */
export const useProviderKeys = () => useQuery(providerKeysQueryOptions);

export const useSaveProviderKey = () =>
  useInvalidatingMutation(
    settingsKeys.providerKeys,
    (body: { provider: string; api_key: string; base_url?: string | null }) =>
      api<ProviderKey>('/provider-keys', { method: 'POST', body }),
  );

export const useDeleteProviderKey = () =>
  useInvalidatingMutation(settingsKeys.providerKeys, (provider: string) =>
    api<unknown>(`/provider-keys/${encodeURIComponent(provider)}`, { method: 'DELETE' }),
  );

export const useCreateCriterion = () =>
  useInvalidatingMutation(criterionKeys.all, (body: CriterionCreate) =>
    api<Criterion>('/annotation-criteria', { method: 'POST', body }),
  );

export const useDeleteCriterion = () =>
  useInvalidatingMutation(criterionKeys.all, (id: string) =>
    api<unknown>(`/annotation-criteria/${id}`, { method: 'DELETE' }),
  );

/**
 * Names the evaluation metric a criterion corresponds to, or forgets it (`eval_metric_name: null`): pending
 * until the criteria are read again; the criterion's agreement, if open, is measured again beside.
 */
export const useSetCriterionMetric = () => {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...body }: CriterionPatch & { id: string }) =>
      api<Criterion>(`/annotation-criteria/${id}`, { method: 'PATCH', body }),
    onSuccess: (_criterion, { id }) => {
      void client.invalidateQueries({ queryKey: agreementKeys.of(id) });
      return client.invalidateQueries({ queryKey: criterionKeys.all });
    },
  });
};
