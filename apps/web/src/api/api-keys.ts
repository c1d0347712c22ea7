import { queryOptions, useQuery } from '@tanstack/react-query';
import { useInvalidatingMutation } from '../lib/react-query';
import { api } from './client';
import type { ApiKey, ApiKeyCreated, Role } from './types';

export const apiKeyKeys = { all: ['api-keys'] as const };

const apiKeysQueryOptions = queryOptions({
  queryKey: apiKeyKeys.all,
  queryFn: ({ signal }) => api<ApiKey[]>('/api-keys', { signal }),
});

/** The organization's API keys (only their last characters readable): the settings, and who changed what. */
export const useApiKeys = () => useQuery(apiKeysQueryOptions);

/** Makes a key; the whole key is in the answer, this once (Settings → API keys, and the first-run guide). */
export const useCreateApiKey = () =>
  useInvalidatingMutation(apiKeyKeys.all, (body: { role: Role; label: string; service: boolean }) =>
    api<ApiKeyCreated>('/api-keys', { method: 'POST', body }),
  );
