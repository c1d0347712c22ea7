import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { spanQueryOptions, traceKeys } from '../../api/traces';
import type { TraceSkeleton } from '../../api/types';
import { useInvalidatingMutation } from '../../lib/react-query';

const skeletonQueryOptions = (traceId: string) =>
  queryOptions({
    queryKey: traceKeys.skeleton(traceId),
    queryFn: ({ signal }) => api<TraceSkeleton>(`/trace/${traceId}/skeleton`, { signal }),
  });

/** Every span of a trace with the fields the tree and the timeline draw. */
export const useTraceSkeleton = (traceId: string) => useQuery(skeletonQueryOptions(traceId));

/** The selected span with all its fields; none while nothing is selected. */
export const useSpan = (traceId: string | null) => useQuery({ ...spanQueryOptions(traceId ?? ''), enabled: !!traceId });

/** Comments and annotations of one span: each write reads the span, which holds them, again. */
export function useRemarks(traceId: string) {
  const span = traceKeys.span(traceId);
  const base = `/trace_log/${traceId}`;
  return {
    addComment: useInvalidatingMutation(span, (comment: string) =>
      api<unknown>(`${base}/comments`, { method: 'POST', body: { comment } }),
    ),
    deleteComment: useInvalidatingMutation(span, (id: string) =>
      api<unknown>(`${base}/comments/${id}`, { method: 'DELETE' }),
    ),
    annotate: useInvalidatingMutation(
      span,
      ({ criterionId, body }: { criterionId: string; body: { score?: number; value?: string } }) =>
        api<unknown>(`${base}/annotations/${criterionId}`, { method: 'PUT', body }),
    ),
    unannotate: useInvalidatingMutation(span, (criterionId: string) =>
      api<unknown>(`${base}/annotations/${criterionId}`, { method: 'DELETE' }),
    ),
  };
}
