import { queryOptions, useQuery } from '@tanstack/react-query';
import {
  queueKeys,
  type AnnotationQueue,
  type AnnotationQueueCreate,
  type AnnotationQueuePatch,
  type LeasedItem,
} from '../../api/annotation-queues';
import { api } from '../../api/client';
import { useInvalidatingMutation } from '../../lib/react-query';

const queueQueryOptions = (id: string) =>
  queryOptions({
    queryKey: queueKeys.detail(id),
    queryFn: ({ signal }) => api<AnnotationQueue>(`/annotation-queues/${id}`, { signal }),
  });

/**
 * The item the caller holds, or the next one leased to them; null when nothing is left (204). Asked once
 * per visit (never again in the background, which could lease another item under the reviewer's eyes), and
 * again when an item is finished.
 */
const nextItemQueryOptions = (id: string) =>
  queryOptions({
    queryKey: queueKeys.next(id),
    queryFn: async ({ signal }) =>
      (await api<LeasedItem | undefined>(`/annotation-queues/${id}/next`, { method: 'POST', signal })) ?? null,
    staleTime: Infinity,
    gcTime: 0,
  });

/** One queue: its instructions, criteria and counts (the review page). */
export const useQueue = (id: string) => useQuery(queueQueryOptions(id));

/** Leases the next item to review; nothing is asked while `enabled` is false (a viewer cannot review). */
export const useNextItem = (id: string, enabled: boolean) => useQuery({ ...nextItemQueryOptions(id), enabled });

export const useCreateQueue = () =>
  useInvalidatingMutation(queueKeys.all, (body: AnnotationQueueCreate) =>
    api<AnnotationQueue>('/annotation-queues', { method: 'POST', body }),
  );

export const useUpdateQueue = () =>
  useInvalidatingMutation(queueKeys.all, ({ id, ...body }: AnnotationQueuePatch & { id: string }) =>
    api<AnnotationQueue>(`/annotation-queues/${id}`, { method: 'PATCH', body }),
  );

export const useDeleteQueue = () =>
  useInvalidatingMutation(queueKeys.all, (id: string) => api(`/annotation-queues/${id}`, { method: 'DELETE' }));

/**
 * Completes or skips the item the caller holds: the queue's counts and the lease are read again, so that the
 * mutation is pending until the next item (or none) is there. A 409 means the lease lapsed.
 */
export const useFinishItem = (queueId: string) =>
  useInvalidatingMutation(queueKeys.all, ({ itemId, action }: { itemId: number; action: 'complete' | 'skip' }) =>
    api<{ item_id: number; status: string }>(`/annotation-queues/${queueId}/items/${itemId}/${action}`, {
      method: 'POST',
    }),
  );

/** Renews the lease for another 10 minutes (a 409 when the caller no longer holds the item). */
export const useRenewLease = (queueId: string) =>
  useInvalidatingMutation(queueKeys.detail(queueId), (itemId: number) =>
    api<LeasedItem>(`/annotation-queues/${queueId}/items/${itemId}/lease`, { method: 'POST' }),
  );
