import type { CompareOutcome } from '../../api/types';
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

const CHANGES = ['improved', 'regressed', 'unchanged'] as const;
const KINDS = ['score', 'latency', 'cost'] as const;

/**
 * A comparison: the experiments (2 to 5), the one the others are compared with, the page of test cases;
 * and which cases show: those where a run improved on the baseline by a metric (or regressed, or stayed
 * the same), or the case of one sample (a trace), or all of them.
 */
export type CompareView = {
  ids: string[];
  baseline: string | null;
  page: number;
  outcome: CompareOutcome | null;
  trace: string | null;
};

/** The outcome the parameters name, when it is one the comparison counts: a compared run, not the baseline. */
function readOutcome(params: URLSearchParams, ids: string[], baseline: string | null): CompareOutcome | null {
  const change = params.get('cases');
  const run = params.get('run');
  const kind = params.get('kind') ?? 'score';
  const metric = params.get('metric');
  if (!CHANGES.some((c) => c === change) || !KINDS.some((k) => k === kind)) return null;
  if (run === null || run === baseline || !ids.includes(run)) return null;
  if ((kind === 'score') !== (metric !== null && metric !== '')) return null;
  return {
    run_uuid: run,
    kind: kind as CompareOutcome['kind'],
    ...(kind === 'score' && { metric }),
    change: change as CompareOutcome['change'],
  };
}

export const compareCodec: UrlCodec<CompareView> = {
  parse: (params) => {
    const ids = (params.get('ids') ?? '').split(',').filter(Boolean);
    const named = params.get('baseline');
    const baseline = named !== null && ids.includes(named) ? named : (ids[0] ?? null);
    return {
      ids,
      baseline,
      page: readPage(params),
      outcome: readOutcome(params, ids, baseline),
      trace: params.get('trace') || null,
    };
  },
  write: ({ ids, baseline, page, outcome, trace }) => {
    const params = new URLSearchParams();
    if (ids.length) params.set('ids', ids.join(','));
    if (baseline) params.set('baseline', baseline);
    params.set('page', String(page));
    if (outcome) {
      params.set('cases', outcome.change);
      params.set('run', outcome.run_uuid);
      if (outcome.kind !== 'score') params.set('kind', outcome.kind);
      if (outcome.metric) params.set('metric', outcome.metric);
    }
    if (trace) params.set('trace', trace);
    return params;
  },
};
