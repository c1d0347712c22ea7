import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';

/**
 * A write after which the queries under `queryKey` (a key factory's prefix) are read again; it is pending
 * until they are, so that a form closing on success shows the new state.
 */
export function useInvalidatingMutation<V, T>(queryKey: QueryKey, mutationFn: (variables: V) => Promise<T>) {
  const client = useQueryClient();
  return useMutation({ mutationFn, onSuccess: () => client.invalidateQueries({ queryKey }) });
}
