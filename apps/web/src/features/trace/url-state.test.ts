import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { traceCodec } from './url-state';

describe("the trace page's selected span and search in the URL", () => {
  it('round-trips the span, or none, and the search, or none', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: null }), fc.string(), (span, search) => {
        const written = new URLSearchParams(traceCodec.write({ span, search }).toString());
        expect(traceCodec.parse(written)).toEqual({ span, search });
      }),
    );
    expect(traceCodec.parse(new URLSearchParams('q=1'))).toEqual({ span: null, search: '' });
    expect(traceCodec.write({ span: null, search: '' }).toString()).toBe('');
  });
});
