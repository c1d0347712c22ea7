import type { UrlCodec } from '../../lib/url-codec';

/** The span selected in the tree (the root when none is named). */
export type TraceView = { span: string | null };

export const traceCodec: UrlCodec<TraceView> = {
  parse: (params) => ({ span: params.get('span') }),
  write: ({ span }) => new URLSearchParams(span === null ? {} : { span }),
};
