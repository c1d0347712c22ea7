import { FILTER_OPERATORS } from '@sightline/core/filters';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UrlCodec } from '../../lib/url-codec';
import { SORT_KEYS } from './lib/experiments';
import { compareCodec, experimentsCodec, samplesCodec, type CompareView, type ExperimentsView } from './url-state';

/** What a link to the value reads back as. */
const viaLink = <T>(codec: UrlCodec<T>, value: T) => codec.parse(new URLSearchParams(codec.write(value).toString()));
const junk = (...names: string[]) => fc.dictionary(fc.constantFrom(...names), fc.string());

const LIST_DEFAULT: ExperimentsView = { name: '', run: '', metadata: '', sort: { key: 'created_at', desc: true } };

describe('the experiments list in the URL', () => {
  it('round-trips its filters and order', () => {
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          run: fc.string(),
          metadata: fc.string(),
          sort: fc.record({ key: fc.constantFrom(...SORT_KEYS), desc: fc.boolean() }),
        }),
        (view) => {
          expect(viaLink(experimentsCodec, view)).toEqual(view);
        },
      ),
    );
    expect(experimentsCodec.write(LIST_DEFAULT).toString()).toBe('');
    expect(
      Object.fromEntries(experimentsCodec.write({ ...LIST_DEFAULT, name: 'qa', sort: { key: 'samples', desc: true } })),
    ).toEqual({ name: 'qa', sort: 'samples', dir: 'desc' });
  });

  it('reads an unknown order as newest first', () => {
    expect(experimentsCodec.parse(new URLSearchParams('sort=cost&dir=sideways'))).toEqual(LIST_DEFAULT);
    fc.assert(
      fc.property(junk('name', 'run', 'metadata', 'sort', 'dir'), (params) => {
        const view = experimentsCodec.parse(new URLSearchParams(params));
        expect(viaLink(experimentsCodec, view)).toEqual(view);
      }),
    );
  });
});

const filterArb = fc.record(
  {
    field: fc.string({ minLength: 1 }),
    operator: fc.constantFrom(...FILTER_OPERATORS),
    key: fc.string({ minLength: 1 }),
    value: fc.string({ minLength: 1 }),
  },
  { requiredKeys: ['field', 'operator'] },
);

describe("an experiment's samples in the URL", () => {
  it('round-trips the filter and the page, as the traces page writes them', () => {
    fc.assert(
      fc.property(
        fc.record({ filter: fc.option(filterArb, { nil: null }), page: fc.integer({ min: 1, max: 100_000 }) }),
        (view) => {
          expect(viaLink(samplesCodec, view)).toEqual(view);
        },
      ),
    );
    expect(
      Object.fromEntries(
        samplesCodec.write({ filter: { field: 'status', operator: 'equals', value: 'error' }, page: 3 }),
      ),
    ).toEqual({ filter: 'status', op: 'equals', value: 'error', page: '3' });
  });

  it('reads a broken filter or page as none and the first', () => {
    expect(samplesCodec.parse(new URLSearchParams('filter=status&op=resembles&page=0'))).toEqual({
      filter: null,
      page: 1,
    });
    fc.assert(
      fc.property(junk('filter', 'op', 'key', 'value', 'page'), (params) => {
        const view = samplesCodec.parse(new URLSearchParams(params));
        expect(viaLink(samplesCodec, view)).toEqual(view);
      }),
    );
  });
});

const compareArb: fc.Arbitrary<CompareView> = fc.uniqueArray(fc.uuid(), { maxLength: 5 }).chain((ids) =>
  (ids.length ? fc.constantFrom(...ids) : fc.constant(null)).chain((baseline) => {
    const others = ids.filter((id) => id !== baseline);
    const outcome = others.length
      ? fc.option(
          fc.oneof(
            fc.record({
              run_uuid: fc.constantFrom(...others),
              kind: fc.constant('score' as const),
              metric: fc.string({ minLength: 1 }),
              change: fc.constantFrom('improved' as const, 'regressed' as const, 'unchanged' as const),
            }),
            fc.record({
              run_uuid: fc.constantFrom(...others),
              kind: fc.constantFrom('latency' as const, 'cost' as const),
              change: fc.constantFrom('improved' as const, 'regressed' as const, 'unchanged' as const),
            }),
          ),
          { nil: null },
        )
      : fc.constant(null);
    return fc.record({
      ids: fc.constant(ids),
      baseline: fc.constant(baseline),
      page: fc.integer({ min: 1, max: 1000 }),
      outcome,
      trace: fc.option(fc.uuid(), { nil: null }),
    });
  }),
);

describe('a comparison in the URL', () => {
  it('round-trips the runs, the baseline and the page', () => {
    fc.assert(
      fc.property(compareArb, (view) => {
        expect(viaLink(compareCodec, view)).toEqual(view);
      }),
    );
  });

  it('takes the first run as the baseline when the named one is not compared', () => {
    expect(compareCodec.parse(new URLSearchParams('ids=a,b&baseline=c&page=x'))).toEqual({
      ids: ['a', 'b'],
      baseline: 'a',
      page: 1,
      outcome: null,
      trace: null,
    });
    expect(compareCodec.parse(new URLSearchParams(''))).toEqual({
      ids: [],
      baseline: null,
      page: 1,
      outcome: null,
      trace: null,
    });
    fc.assert(
      fc.property(junk('ids', 'baseline', 'page', 'cases', 'run', 'kind', 'metric', 'trace'), (params) => {
        const view = compareCodec.parse(new URLSearchParams(params));
        expect(viaLink(compareCodec, view)).toEqual(view);
      }),
    );
  });

  it('reads the cases shown: those a run improved on, regressed on or left the same, by a metric', () => {
    const view = compareCodec.parse(new URLSearchParams('ids=a,b&baseline=a&cases=improved&run=b&metric=accuracy'));
    expect(view.outcome).toEqual({ run_uuid: 'b', kind: 'score', metric: 'accuracy', change: 'improved' });
    expect(compareCodec.parse(new URLSearchParams('ids=a,b&cases=regressed&run=b&kind=latency')).outcome).toEqual({
      run_uuid: 'b',
      kind: 'latency',
      change: 'regressed',
    });
    // The baseline against itself, a run not compared, a score without its name: all the cases.
    for (const query of ['cases=improved&run=a&metric=m', 'cases=improved&run=c&metric=m', 'cases=improved&run=b'])
      expect(compareCodec.parse(new URLSearchParams(`ids=a,b&baseline=a&${query}`)).outcome).toBeNull();
  });
});
