import type { FilterCondition } from '../../lib/filter-fields';
import { readFilter, writeFilter } from '../../lib/trace-view';
import { oneOf, readPage, type UrlCodec } from '../../lib/url-codec';
import { SORT_KEYS, type ExperimentSort } from './lib/experiments';

/** The experiments list: its filters as typed, and its order. */
export type ExperimentsView = { name: string; run: string; metadata: string; sort: ExperimentSort };

const DEFAULT_SORT: ExperimentSort = { key: 'created_at', desc: true };

export const experimentsCodec: UrlCodec<ExperimentsView> = {
  parse: (params) => ({
    name: params.get('name') ?? '',
    run: params.get('run') ?? '',
    metadata: params.get('metadata') ?? '',
    sort: { key: oneOf(SORT_KEYS, params.get('sort'), DEFAULT_SORT.key), desc: params.get('dir') !== 'asc' },
  }),
  write: ({ name, run, metadata, sort }) => {
    const params = new URLSearchParams();
    if (name) params.set('name', name);
    if (run) params.set('run', run);
    if (metadata) params.set('metadata', metadata);
    if (sort.key !== DEFAULT_SORT.key || sort.desc !== DEFAULT_SORT.desc) {
      params.set('sort', sort.key);
      params.set('dir', sort.desc ? 'desc' : 'asc');
    }
    return params;
  },
};

/** An experiment's samples: the filter and the page, as the traces page writes them. */
export type SamplesView = { filter: FilterCondition | null; page: number };

export const samplesCodec: UrlCodec<SamplesView> = {
  parse: (params) => ({ filter: readFilter(params), page: readPage(params) }),
  write: ({ filter, page }) => {
    const params = new URLSearchParams();
    writeFilter(params, filter);
    if (page > 1) params.set('page', String(page));
    return params;
  },
};

/** A comparison: the experiments (2 to 5), the one the others are compared with, the page of test cases. */
export type CompareView = { ids: string[]; baseline: string | null; page: number };

export const compareCodec: UrlCodec<CompareView> = {
  parse: (params) => {
    const ids = (params.get('ids') ?? '').split(',').filter(Boolean);
    const baseline = params.get('baseline');
    return {
      ids,
      baseline: baseline !== null && ids.includes(baseline) ? baseline : (ids[0] ?? null),
      page: readPage(params),
    };
  },
  write: ({ ids, baseline, page }) => {
    const params = new URLSearchParams();
    if (ids.length) params.set('ids', ids.join(','));
    if (baseline) params.set('baseline', baseline);
    params.set('page', String(page));
    return params;
  },
};
