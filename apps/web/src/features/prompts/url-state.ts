import { oneOf, type UrlCodec } from '../../lib/url-codec';

export const TABS = ['versions', 'diff', 'playground'] as const;

/** `version` for a playground that starts from a blank prompt rather than the selected prompt's newest version. */
export const BLANK = 'blank';

/**
 * The prompt picked, its tab, and the version the playground starts from (by id, or BLANK; none names the
 * selected prompt's newest).
 */
export type PromptsView = { tab: (typeof TABS)[number]; name: string | null; version: string | null };

export const promptsCodec: UrlCodec<PromptsView> = {
  parse: (params) => ({
    tab: oneOf(TABS, params.get('tab'), 'versions'),
    name: params.get('name'),
    version: params.get('version'),
  }),
  write: ({ tab, name, version }) => {
    const params = new URLSearchParams();
    if (name !== null) params.set('name', name);
    params.set('tab', tab);
    if (version !== null) params.set('version', version);
    return params;
  },
};
