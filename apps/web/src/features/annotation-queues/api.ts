import { queryOptions, useQuery } from '@tanstack/react-query';
import type {
  AnnotationQueueCreateSchema,
  AnnotationQueueItemsSchema,
  AnnotationQueuePatchSchema,
  AnnotationQueueSchema,
  LeasedItemSchema,
} from '@sightline/schemas';
import type { z } from 'zod';
import { api } from '../../api/client';
import { useInvalidatingMutation } from '../../lib/react-query';

// Wire types of the queue routes, from the API's zod schemas (type-only: no schema code reaches the bundle).
// They would sit in api/types.ts with the others; they are here while only this feature uses them.
export type AnnotationQueue = z.output<typeof AnnotationQueueSchema>;
export type AnnotationQueueCreate = z.input<typeof AnnotationQueueCreateSchema>;
export type AnnotationQueuePatch = z.input<typeof AnnotationQueuePatchSchema>;
export type QueueItemsRequest = z.input<typeof AnnotationQueueItemsSchema>;
export type LeasedItem = z.output<typeof LeasedItemSchema>;

/**
 * Every queue query starts with `all`: a change to a queue, or an item finished, reads them all again (the
 * counts change). The lease (`next`) is under `all` too, so that finishing an item brings the next one.
 */
const queueKeys = {
  all: ['annotation-queues'] as const,
  list: (projectUuid: string) => [...queueKeys.all, 'list', projectUuid] as const,
  detail: (id: string) => [...queueKeys.all, 'detail', id] as const,
  next: (id: string) => [...queueKeys.all, 'next', id] as const,
};

const queuesQueryOptions = (projectUuid: string) =>
  queryOptions({
    queryKey: queueKeys.list(projectUuid),
    queryFn: ({ signal }) =>
      api<AnnotationQueue[]>(`/annotation-queues?project_uuid=${encodeURIComponent(projectUuid)}`, { signal }),
  });

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

/** A project's queues with their counts and reviewers. */
export const useQueues = (projectUuid: string) => useQuery(queuesQueryOptions(projectUuid));

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

/** Adds traces by id, or a random sample of the project's traces that pass every filter. */
export const useAddItems = () =>
  useInvalidatingMutation(queueKeys.all, ({ id, body }: { id: string; body: QueueItemsRequest }) =>
    api<{ added: number }>(`/annotation-queues/${id}/items`, { method: 'POST', body }),
  );

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
