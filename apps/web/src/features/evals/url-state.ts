import type { UrlCodec } from '../../lib/url-codec';

/** The metric open beside the list (its configuration and versions), by id. */
export type EvalsView = { metric: number | null };

export const evalsCodec: UrlCodec<EvalsView> = {
  parse: (params) => {
    const id = Number(params.get('metric'));
    return { metric: Number.isSafeInteger(id) && id >= 1 ? id : null };
  },
  write: ({ metric }) => new URLSearchParams(metric === null ? {} : { metric: String(metric) }),
};
