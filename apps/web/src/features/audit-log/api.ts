import { infiniteQueryOptions, useInfiniteQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import type { AuditLogPage } from '../../api/types';
import type { AuditView } from './url-state';

/** Entries a page: enough to fill a screen twice over, each page one indexed read. */
const PAGE_SIZE = 100;

const auditLogKeys = {
  all: ['audit-log'] as const,
  view: (view: AuditView) => [...auditLogKeys.all, view] as const,
};

const auditLogQueryOptions = (view: AuditView) =>
  infiniteQueryOptions({
    queryKey: auditLogKeys.view(view),
    queryFn: ({ pageParam, signal }) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (view.actor) query.set('actor', view.actor);
      if (view.kind) query.set('target_kind', view.kind);
      if (pageParam) query.set('before', pageParam);
      return api<AuditLogPage>(`/audit-log?${query}`, { signal });
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next,
  });

/** The organization's audit log under the view's filters, newest first, a page at a time as it scrolls. */
export const useAuditLog = (view: AuditView) => useInfiniteQuery(auditLogQueryOptions(view));
