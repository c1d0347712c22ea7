import { queryOptions, useQuery } from '@tanstack/react-query';
import type {
  AnnotationQueueCreateSchema,
  AnnotationQueueItemsSchema,
  AnnotationQueuePatchSchema,
  AnnotationQueueSchema,
  LeasedItemSchema,
} from '@sightline/schemas';
import type { z } from 'zod';
import { useInvalidatingMutation } from '../lib/react-query';
import { api } from './client';

// Wire types of the queue routes, from the API's zod schemas (type-only: no schema code reaches the bundle).
export type AnnotationQueue = z.output<typeof AnnotationQueueSchema>;
export type AnnotationQueueCreate = z.input<typeof AnnotationQueueCreateSchema>;
export type AnnotationQueuePatch = z.input<typeof AnnotationQueuePatchSchema>;
export type QueueItemsRequest = z.input<typeof AnnotationQueueItemsSchema>;
export type LeasedItem = z.output<typeof LeasedItemSchema>;

/**
 * Every queue query starts with `all`: a change to a queue, or an item finished, reads them all again (the
 * counts change). The lease (`next`) is under `all` too, so that finishing an item brings the next one.
 */
export const queueKeys = {
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

/** A project's queues with their counts and reviewers (the queues page, and "Add to queue" elsewhere). */
export const useQueues = (projectUuid: string, enabled = true) =>
  useQuery({ ...queuesQueryOptions(projectUuid), enabled });

/** The most traces one sample adds to a queue (the API's bound on `sample_size`). */
export const MAX_SAMPLE = 10_000;

/** Adds traces by id, or a random sample of the project's traces that pass every filter. */
export const useAddItems = () =>
  useInvalidatingMutation(queueKeys.all, ({ queue, body }: { queue: AnnotationQueue; body: QueueItemsRequest }) =>
    api<{ added: number }>(`/annotation-queues/${queue.id}/items`, { method: 'POST', body }),
  );
