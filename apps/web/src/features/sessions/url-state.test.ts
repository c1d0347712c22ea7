import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TIME_RANGE_LABELS } from '../../lib/trace-view';
import type { TimeRange } from '../../api/types';
import { GROUPINGS, sessionsCodec, type SessionsView } from './url-state';

const viaLink = (view: SessionsView) => sessionsCodec.parse(new URLSearchParams(sessionsCodec.write(view).toString()));
const RANGES = Object.keys(TIME_RANGE_LABELS) as TimeRange[];

describe('the sessions page in the URL', () => {
  it('round-trips the grouping, the search, the time range, the page and the open group', () => {
    fc.assert(
      fc.property(
        fc.record({
          by: fc.constantFrom(...GROUPINGS),
          search: fc.string(),
          range: fc.constantFrom(...RANGES),
          page: fc.integer({ min: 1, max: 100_000 }),
          key: fc.option(fc.string(), { nil: null }),
        }),
        (view) => {
          expect(viaLink(view)).toEqual(view);
        },
      ),
    );
    expect(
      Object.fromEntries(sessionsCodec.write({ by: 'session', search: '', range: 'na', page: 1, key: null })),
    ).toEqual({ by: 'session' });
    expect(
      Object.fromEntries(sessionsCodec.write({ by: 'user', search: 'ann', range: '24h', page: 1, key: null })),
    ).toEqual({ by: 'user', q: 'ann', range: '24h' });
  });

  it('reads an unknown grouping, time range or page as by session, all time, first page', () => {
    expect(sessionsCodec.parse(new URLSearchParams('by=team&page=-3&range=forever'))).toEqual({
      by: 'session',
      search: '',
      range: 'na',
      page: 1,
      key: null,
    });
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('by', 'q', 'range', 'page', 'key'), fc.string()), (params) => {
        const view = sessionsCodec.parse(new URLSearchParams(params));
        expect(viaLink(view)).toEqual(view);
      }),
    );
  });
});
