import type { TimeRange } from '../../api/types';
import { TIME_RANGE_LABELS } from '../../lib/trace-view';
import { keyOf, oneOf, readPage, type UrlCodec } from '../../lib/url-codec';

export const GROUPINGS = ['session', 'user'] as const;

/**
 * How the traces are grouped, the search of the groups' keys and the time range (as the traces page
 * writes them: `q`, `range`), the page of groups, and the group open in the drawer.
 */
export type SessionsView = {
  by: (typeof GROUPINGS)[number];
  search: string;
  range: TimeRange;
  page: number;
  key: string | null;
};

export const sessionsCodec: UrlCodec<SessionsView> = {
  parse: (params) => ({
    by: oneOf(GROUPINGS, params.get('by'), 'session'),
    search: params.get('q') ?? '',
    range: keyOf(TIME_RANGE_LABELS, params.get('range'), 'na'),
    page: readPage(params),
    key: params.get('key'),
  }),
  write: ({ by, search, range, page, key }) => {
    const params = new URLSearchParams({ by });
    if (search) params.set('q', search);
    if (range !== 'na') params.set('range', range);
    if (page > 1) params.set('page', String(page));
    if (key !== null) params.set('key', key);
    return params;
  },
};
