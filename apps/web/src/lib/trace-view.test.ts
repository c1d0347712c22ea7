import { FILTER_OPERATORS } from '@sightline/core/filters';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterCondition } from './filter-fields';
import {
  DEFAULT_VIEW,
  filtersFromView,
  isTimeRange,
  liveRowFits,
  PAGE_SIZES,
  rangeStart,
  requestFromView,
  SORT_LABELS,
  TIME_RANGE_LABELS,
  traceViewCodec,
  type TraceView,
} from './trace-view';

/** What a link to the view reads back as. */
const viaLink = (view: TraceView) => traceViewCodec.parse(new URLSearchParams(traceViewCodec.write(view).toString()));

/** A filter as the builder composes it: an empty key or value is no key or value. */
const filterArb: fc.Arbitrary<FilterCondition> = fc.record(
  {
    field: fc.string({ minLength: 1 }),
    operator: fc.constantFrom(...FILTER_OPERATORS),
    key: fc.string({ minLength: 1 }),
    value: fc.string({ minLength: 1 }),
  },
  { requiredKeys: ['field', 'operator'] },
);

const viewArb: fc.Arbitrary<TraceView> = fc.record({
  search: fc.string(),
  sort: fc.constantFrom(...(Object.keys(SORT_LABELS) as (keyof typeof SORT_LABELS)[])),
  status: fc.constantFrom('', 'success', 'error'),
  range: fc.constantFrom(...Object.keys(TIME_RANGE_LABELS).filter(isTimeRange)),
  page: fc.integer({ min: 1, max: 1_000_000 }),
  pageSize: fc.constantFrom(...PAGE_SIZES),
  filters: fc.array(filterArb, { maxLength: 4 }),
  experiments: fc.boolean(),
});

describe('the traces view in the URL', () => {
  it('round-trips every part of a view', () => {
    const views: TraceView[] = [
      DEFAULT_VIEW,
      {
        search: 'refund policy',
        sort: 'slowest',
        status: 'error',
        range: '7d',
        page: 4,
        pageSize: 250,
        filters: [
          { field: 'metadata', key: 'customer', operator: 'like', value: 'acme' },
          { field: 'trace_name', operator: 'equals', value: 'rag-query' },
        ],
        experiments: true,
      },
      { ...DEFAULT_VIEW, filters: [{ field: 'annotation:score:12', operator: 'greater_than_or_equal', value: '0.5' }] },
      { ...DEFAULT_VIEW, filters: [{ field: 'score:acc:v2', operator: 'is_null' }] },
      { ...DEFAULT_VIEW, sort: 'costliest' },
      {
        ...DEFAULT_VIEW,
        filters: [{ field: 'start_timestamp', operator: 'between', value: '2026-01-01, 2026-01-31 23:59:59' }],
      },
    ];
    for (const view of views) expect(viaLink(view)).toEqual(view);
    fc.assert(
      fc.property(viewArb, (view) => {
        expect(viaLink(view)).toEqual(view);
      }),
    );
  });

  it('keeps links of plain views short', () => {
    expect(traceViewCodec.write(DEFAULT_VIEW).toString()).toBe('');
    expect(traceViewCodec.write({ ...DEFAULT_VIEW, status: 'error', search: 'refund' }).toString()).toBe(
      'q=refund&status=error',
    );
  });

  it('reads a link of old, with one filter, and several filters', () => {
    const view = traceViewCodec.parse(new URLSearchParams('filter=metadata&key=env&op=equals&value=prod&status=error'));
    expect(view.filters).toEqual([{ field: 'metadata', key: 'env', operator: 'equals', value: 'prod' }]);
    const link = traceViewCodec.write({
      ...view,
      filters: [...view.filters, { field: 'latency', operator: 'greater_than', value: '2' }],
    });
    expect(link.getAll('filter')).toEqual(['["metadata","equals","prod","env"]', '["latency","greater_than","2"]']);
    expect(traceViewCodec.parse(link).filters).toHaveLength(2);
  });

  it('reads unknown values as the defaults', () => {
    expect(
      traceViewCodec.parse(new URLSearchParams('status=maybe&range=2w&page=-1&size=7&op=nope&filter=x&sort=toString')),
    ).toEqual(DEFAULT_VIEW);
    expect(traceViewCodec.parse(new URLSearchParams('page=2.5&range=constructor&size=100.0'))).toEqual(DEFAULT_VIEW);
    // Whatever the address bar holds, what is read is a view that a link reproduces.
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('q', 'sort', 'status', 'range', 'page', 'size', 'filter', 'key', 'op', 'value'),
          fc.string(),
        ),
        (junk) => {
          const view = traceViewCodec.parse(new URLSearchParams(junk));
          expect(viaLink(view)).toEqual(view);
        },
      ),
    );
  });

  it('asks the server for the view, without a filter still being written', () => {
    expect(
      requestFromView(
        {
          ...DEFAULT_VIEW,
          page: 4,
          pageSize: 250,
          range: '7d',
          status: 'error',
          search: 'refund policy',
          sort: 'slowest',
          filters: [
            { field: 'metadata', key: 'customer', operator: 'like', value: 'acme' },
            { field: 'status', operator: 'equals', value: 'error' },
          ],
        },
        'p-1',
      ),
    ).toEqual({
      project_uuid: 'p-1',
      page: 4,
      page_size: 250,
      time_range: '7d',
      status: 'error',
      search: 'refund policy',
      sort: 'slowest',
      filters: [
        { field: 'metadata', key: 'customer', operator: 'like', value: 'acme' },
        { field: 'status', operator: 'equals', value: 'error' },
      ],
      include_experiments: false,
    });
    // An incomplete filter from a hand-edited link is not sent.
    expect(
      requestFromView({ ...DEFAULT_VIEW, filters: [{ field: 'metadata', operator: 'equals', value: 'x' }] }, 'p')
        .filters,
    ).toEqual([]);
  });
});

describe('liveRowFits', () => {
  it('puts a new trace at the top only of a newest-first view it certainly belongs to', () => {
    expect(liveRowFits(DEFAULT_VIEW, { status: 'success' })).toBe(true);
    expect(liveRowFits({ ...DEFAULT_VIEW, status: 'error' }, { status: 'success' })).toBe(false);
    // Another order, a search or a filter: the server places it.
    expect(liveRowFits({ ...DEFAULT_VIEW, sort: 'oldest' }, { status: 'success' })).toBeNull();
    expect(liveRowFits({ ...DEFAULT_VIEW, sort: 'slowest' }, { status: 'success' })).toBeNull();
    expect(liveRowFits({ ...DEFAULT_VIEW, search: 'refund' }, { status: 'success' })).toBeNull();
    // An experiment run's trace belongs only to a view that includes them.
    expect(liveRowFits(DEFAULT_VIEW, { status: 'success', experiment_uuid: 'e-1' })).toBe(false);
    expect(liveRowFits({ ...DEFAULT_VIEW, experiments: true }, { status: 'success', experiment_uuid: 'e-1' })).toBe(
      true,
    );
  });
});

describe("a view's conditions as a queue's filters", () => {
  const now = new Date('2026-03-31T12:30:00.000Z');

  it('start each time range where the listing starts it: hours back, or calendar months', () => {
    expect(rangeStart('na', now)).toBeNull();
    expect(rangeStart('1h', now)?.toISOString()).toBe('2026-03-31T11:30:00.000Z');
    expect(rangeStart('7d', now)?.toISOString()).toBe('2026-03-24T12:30:00.000Z');
    expect(rangeStart('3m', now)?.toISOString()).toBe('2025-12-31T12:30:00.000Z');
    expect(rangeStart('1y', now)?.toISOString()).toBe('2025-03-31T12:30:00.000Z');
  });

  it('carry the filter, the status and the start of the range, and nothing of an incomplete filter', () => {
    const filter: FilterCondition = { field: 'metadata', key: 'env', operator: 'equals', value: 'prod' };
    expect(filtersFromView({ ...DEFAULT_VIEW, filters: [filter], status: 'error', range: '24h' }, now)).toEqual([
      filter,
      { field: 'status', operator: 'equals', value: 'error' },
      { field: 'start_timestamp', operator: 'greater_than_or_equal', value: '2026-03-30 12:30:00' },
    ]);
    expect(filtersFromView({ ...DEFAULT_VIEW, filters: [{ ...filter, key: undefined }] }, now)).toEqual([]);
    expect(filtersFromView(DEFAULT_VIEW, now)).toEqual([]);
  });
});
