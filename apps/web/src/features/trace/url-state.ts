import type { UrlCodec } from '../../lib/url-codec';
import type { CompareContext } from './components/ExperimentLinks';

/**
 * The span selected in the tree (the root when none is named), the search within the trace (empty: none),
 * and the comparison the trace was opened from (its header links back to it), kept as the span changes.
 */
export type TraceView = { span: string | null; search: string; compare?: CompareContext };

export const traceCodec: UrlCodec<TraceView> = {
  parse: (params) => {
    const ids = params.get('compare');
    return {
      span: params.get('span'),
      search: params.get('search') ?? '',
      ...(ids && { compare: { ids, baseline: params.get('baseline') } }),
    };
  },
  write: ({ span, search, compare }) =>
    new URLSearchParams({
      ...(span !== null && { span }),
      ...(search !== '' && { search }),
      ...(compare && { compare: compare.ids }),
      ...(compare?.baseline != null && { baseline: compare.baseline }),
    }),
};
