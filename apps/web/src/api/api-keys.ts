import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { ApiKey } from './types';

export const apiKeyKeys = { all: ['api-keys'] as const };

const apiKeysQueryOptions = queryOptions({
  queryKey: apiKeyKeys.all,
  queryFn: ({ signal }) => api<ApiKey[]>('/api-keys', { signal }),
});

/** The organization's API keys (only their last characters readable): the settings, and who changed what. */
export const useApiKeys = () => useQuery(apiKeysQueryOptions);
