import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './client';
import type { Person } from './types';

export const userKeys = { all: ['users'] as const };

const usersQueryOptions = queryOptions({
  queryKey: userKeys.all,
  queryFn: ({ signal }) => api<Person[]>('/users', { signal }),
  // Names change rarely: the remarks of a trace do not ask again on every visit.
  staleTime: 5 * 60_000,
});

/** The organization's people: the People page, and the names shown beside the emails remarks are signed with. */
export const useUsers = () => useQuery(usersQueryOptions);

/** A remark's author (a person's email, a key's label) → the person's name, for the people known. */
export function usePeopleNames(): (author: string) => string | null {
  const users = useUsers().data;
  return (author) => users?.find((u) => u.email.toLowerCase() === author.toLowerCase())?.name ?? null;
}
