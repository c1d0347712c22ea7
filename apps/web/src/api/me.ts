import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import { session, useSession } from './session';
import type { WhoAmI } from './types';

export const meKeys = { all: ['me'] as const };

export const meQueryOptions = queryOptions({
  queryKey: meKeys.all,
  queryFn: async ({ signal }) => {
    const me = await api<WhoAmI>('/me', { signal });
    session.signedIn();
    return me;
  },
  staleTime: 60_000,
});

/**
 * Who is signed in: the person (or the key a session was opened with), the organization and the role.
 * Not asked once signed out: the cookie is gone, and the sign-in page has the screen.
 */
export function useMe() {
  const { status } = useSession();
  return useQuery({ ...meQueryOptions, enabled: status !== 'signed-out' });
}
