import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type {
  MonitorCreateSchema,
  MonitorDetailSchema,
  MonitorPatchSchema,
  MonitorPreviewRequestSchema,
  MonitorPreviewSchema,
  MonitorSchema,
} from '@sightline/schemas';
import type { z } from 'zod';
import { api } from '../../api/client';
import { useInvalidatingMutation } from '../../lib/react-query';

// Wire types of the monitor routes, from the API's zod schemas (type-only: no schema code reaches the bundle).
export type Monitor = z.output<typeof MonitorSchema>;
export type MonitorDetail = z.output<typeof MonitorDetailSchema>;
export type MonitorCreate = z.input<typeof MonitorCreateSchema>;
export type MonitorPatch = z.input<typeof MonitorPatchSchema>;
export type MonitorPreviewRequest = z.input<typeof MonitorPreviewRequestSchema>;
export type MonitorPoint = z.output<typeof MonitorPreviewSchema>['series'][number];

/** Every monitor query starts with `all`: a change to one reads the list and the details again. */
const monitorKeys = {
  all: ['monitors'] as const,
  list: (projectUuid: string) => [...monitorKeys.all, 'list', projectUuid] as const,
  detail: (id: string) => [...monitorKeys.all, 'detail', id] as const,
  preview: (request: MonitorPreviewRequest) => [...monitorKeys.all, 'preview', request] as const,
};

const monitorsQueryOptions = (projectUuid: string) =>
  queryOptions({
    queryKey: monitorKeys.list(projectUuid),
    queryFn: ({ signal }) => api<Monitor[]>(`/monitors?project_uuid=${encodeURIComponent(projectUuid)}`, { signal }),
    // States change as the workers read the metrics (every minute by default): read them again now and then.
    // An answer that did not change renders nothing.
    refetchInterval: 30_000,
  });

const monitorQueryOptions = (id: string) =>
  queryOptions({
    queryKey: monitorKeys.detail(id),
    queryFn: ({ signal }) => api<MonitorDetail>(`/monitors/${id}`, { signal }),
    // The series moves by the hour; a minute-old reading is what the list shows beside it.
    staleTime: 60_000,
    // A delivery still pending is being sent (or retried): its outcome is shown once it has one, then nothing more.
    refetchInterval: (query) => (query.state.data?.deliveries.some((d) => d.status === 'pending') ? 5_000 : false),
  });

const previewQueryOptions = (request: MonitorPreviewRequest) =>
  queryOptions({
    queryKey: monitorKeys.preview(request),
    queryFn: ({ signal }) =>
      api<{ series: MonitorPoint[] }>('/monitors/preview', { method: 'POST', body: request, signal }),
    // The last curve stays while the next one loads, rather than the chart blinking at each change.
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });

/** A project's monitors with their state and last value. */
export const useMonitors = (projectUuid: string) => useQuery(monitorsQueryOptions(projectUuid));

/** One monitor: its metric's last 24 hours, its changes of state and its deliveries. */
export const useMonitor = (id: string) => useQuery(monitorQueryOptions(id));

/** The metric of a monitor being written, over the last 24 hours; nothing is asked while `request` is null. */
export const useMonitorPreview = (request: MonitorPreviewRequest | null) =>
  useQuery({ ...previewQueryOptions(request!), enabled: !!request });

export const useCreateMonitor = () =>
  useInvalidatingMutation(monitorKeys.all, (body: MonitorCreate) =>
    api<Monitor>('/monitors', { method: 'POST', body }),
  );

export const useUpdateMonitor = () =>
  useInvalidatingMutation(monitorKeys.all, ({ id, ...body }: MonitorPatch & { id: string }) =>
    api<Monitor>(`/monitors/${id}`, { method: 'PATCH', body }),
  );

export const useDeleteMonitor = () =>
  useInvalidatingMutation(monitorKeys.all, (id: string) => api(`/monitors/${id}`, { method: 'DELETE' }));
