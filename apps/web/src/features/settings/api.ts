import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { criterionKeys, type Agreement, type CriterionPatch } from '../../api/criteria';
import type { ApiKey, ApiKeyCreated, Criterion, CriterionCreate, ProviderKey, Role } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const settingsKeys = {
  apiKeys: ['api-keys'] as const,
  providerKeys: ['provider-keys'] as const,
};

const apiKeysQueryOptions = queryOptions({
  queryKey: settingsKeys.apiKeys,
  queryFn: ({ signal }) => api<ApiKey[]>('/api-keys', { signal }),
});

const providerKeysQueryOptions = queryOptions({
  queryKey: settingsKeys.providerKeys,
  queryFn: ({ signal }) => api<ProviderKey[]>('/provider-keys', { signal }),
});

/** The organization's API keys (only their last characters readable). */
export const useApiKeys = () => useQuery(apiKeysQueryOptions);

export const useCreateApiKey = () =>
  useInvalidatingMutation(settingsKeys.apiKeys, (body: { role: Role; label: string }) =>
    api<ApiKeyCreated>('/api-keys', { method: 'POST', body }),
  );

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

const agreementKeys = {
  of: (id: string) => ['criterion-agreement', id] as const,
};

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

/** The periods agreement can be measured over, in days back from now (the API's default is 30). */
export const AGREEMENT_DAYS = [7, 30, 90] as const;
export type AgreementDays = (typeof AGREEMENT_DAYS)[number];

const DAY_MS = 86_400_000;

/** How far a criterion's judge agrees with people over the last `days` days. */
const agreementQueryOptions = (id: string, days: AgreementDays) =>
  queryOptions({
    queryKey: [...agreementKeys.of(id), days] as const,
    queryFn: ({ signal }) => {
      const to = new Date();
      const range = new URLSearchParams({
        from: new Date(to.getTime() - days * DAY_MS).toISOString(),
        to: to.toISOString(),
      });
      return api<Agreement>(`/annotation-criteria/${id}/agreement?${range}`, { signal });
    },
    // The figures move only as spans are annotated and scored: no polling, and reopening a panel within
    // five minutes shows what was read.
    staleTime: 5 * 60_000,
  });

/** A criterion's agreement: its panel mounts this only when opened, so a closed one asks nothing. */
export const useAgreement = (id: string, days: AgreementDays) => useQuery(agreementQueryOptions(id, days));
