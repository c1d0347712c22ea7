import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './client';
import { useSession } from './session';
import type {
  ApiKey,
  ApiKeyCreated,
  ProjectSummary,
  ProviderKey,
  Role,
  Span,
  TraceRows,
  TraceRowsRequest,
  TraceSkeleton,
  WhoAmI,
} from './types';

// Server state of the console, one hook per resource. Query keys start with the resource's name so that
// a mutation can invalidate what it changed.

export function useMe() {
  const { apiKey } = useSession();
  return useQuery({
    queryKey: ['me', apiKey],
    queryFn: () => api<WhoAmI>('/me'),
    enabled: !!apiKey,
    staleTime: 60_000,
  });
}

/** Checks a key before it becomes the session's (the sign-in page). */
export const checkKey = (apiKey: string) => api<WhoAmI>('/me', { apiKey });

export function useProjects() {
  return useQuery({
    queryKey: ['projects'],
    queryFn: () => api<ProjectSummary[]>('/projects'),
    refetchInterval: 30_000,
  });
}

export function useTraces(request: TraceRowsRequest) {
  return useQuery({
    queryKey: ['traces', request],
    queryFn: ({ signal }) => api<TraceRows>('/traces', { method: 'POST', body: request, signal }),
    // The table keeps showing the previous page while the next loads, instead of flashing empty.
    placeholderData: keepPreviousData,
  });
}

export function useTraceSkeleton(traceId: string) {
  return useQuery({
    queryKey: ['skeleton', traceId],
    queryFn: ({ signal }) => api<TraceSkeleton>(`/trace/${traceId}/skeleton`, { signal }),
  });
}

export function useSpan(traceId: string | null) {
  return useQuery({
    queryKey: ['span', traceId],
    queryFn: ({ signal }) => api<Span>(`/span/${traceId}`, { signal }),
    enabled: !!traceId,
    staleTime: 30_000,
  });
}

export function useApiKeys() {
  return useQuery({ queryKey: ['api-keys'], queryFn: () => api<ApiKey[]>('/api-keys') });
}

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { role: Role; label: string }) => api<ApiKeyCreated>('/api-keys', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useRevokeApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api<unknown>(`/api-keys/${id}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useProviderKeys() {
  return useQuery({ queryKey: ['provider-keys'], queryFn: () => api<ProviderKey[]>('/provider-keys') });
}

export function useSaveProviderKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { provider: string; api_key: string; base_url?: string | null }) =>
      api<ProviderKey>('/provider-keys', { method: 'POST', body }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['provider-keys'] }),
  });
}

export function useDeleteProviderKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (provider: string) =>
      api<unknown>(`/provider-keys/${encodeURIComponent(provider)}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['provider-keys'] }),
  });
}
