import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import { useSession } from './session';
import type { WhoAmI } from './types';

const meKeys = {
  all: ['me'] as const,
  // By key: after a sign-in with another key, the previous key's answer is never shown.
  of: (apiKey: string | null) => [...meKeys.all, apiKey] as const,
};

export const meQueryOptions = (apiKey: string | null) =>
  queryOptions({
    queryKey: meKeys.of(apiKey),
    queryFn: ({ signal }) => api<WhoAmI>('/me', { signal }),
    enabled: !!apiKey,
    staleTime: 60_000,
  });

/** Who the session's key is: its organization, label and role. */
export function useMe() {
  const { apiKey } = useSession();
  return useQuery(meQueryOptions(apiKey));
}
