import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { traceCodec } from './url-state';

describe("the trace page's selected span in the URL", () => {
  it('round-trips the span, or none', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: null }), (span) => {
        expect(traceCodec.parse(new URLSearchParams(traceCodec.write({ span }).toString()))).toEqual({ span });
      }),
    );
    expect(traceCodec.parse(new URLSearchParams('q=1'))).toEqual({ span: null });
  });
});
