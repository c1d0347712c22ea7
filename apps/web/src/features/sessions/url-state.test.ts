import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GROUPINGS, sessionsCodec, type SessionsView } from './url-state';

const viaLink = (view: SessionsView) => sessionsCodec.parse(new URLSearchParams(sessionsCodec.write(view).toString()));

describe('the sessions page in the URL', () => {
  it('round-trips the grouping, the page and the open group', () => {
    fc.assert(
      fc.property(
        fc.record({
          by: fc.constantFrom(...GROUPINGS),
          page: fc.integer({ min: 1, max: 100_000 }),
          key: fc.option(fc.string(), { nil: null }),
        }),
        (view) => {
          expect(viaLink(view)).toEqual(view);
        },
      ),
    );
    expect(Object.fromEntries(sessionsCodec.write({ by: 'session', page: 1, key: null }))).toEqual({ by: 'session' });
  });

  it('reads an unknown grouping or page as by session, first page', () => {
    expect(sessionsCodec.parse(new URLSearchParams('by=team&page=-3'))).toEqual({ by: 'session', page: 1, key: null });
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('by', 'page', 'key'), fc.string()), (params) => {
        const view = sessionsCodec.parse(new URLSearchParams(params));
        expect(viaLink(view)).toEqual(view);
      }),
    );
  });
});
