import { oneOf, readPage, type UrlCodec } from '../../lib/url-codec';

export const GROUPINGS = ['session', 'user'] as const;

/** How the traces are grouped, the page of groups, and the group open in the drawer. */
export type SessionsView = { by: (typeof GROUPINGS)[number]; page: number; key: string | null };

export const sessionsCodec: UrlCodec<SessionsView> = {
  parse: (params) => ({
    by: oneOf(GROUPINGS, params.get('by'), 'session'),
    page: readPage(params),
    key: params.get('key'),
  }),
  write: ({ by, page, key }) => {
    const params = new URLSearchParams({ by });
    if (page > 1) params.set('page', String(page));
    if (key !== null) params.set('key', key);
    return params;
  },
};
