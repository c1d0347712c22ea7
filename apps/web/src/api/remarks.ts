import { useInvalidatingMutation } from '../lib/react-query';
import { api } from './client';
import { traceKeys } from './traces';

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

/** The writes of one span's remarks, as the annotation form takes them. */
export type Remarks = ReturnType<typeof useRemarks>;
