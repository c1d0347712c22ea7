import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KIND_LABELS } from './lib/labels';
import { auditViewCodec, type AuditView } from './url-state';

const viaLink = (view: AuditView) => auditViewCodec.parse(new URLSearchParams(auditViewCodec.write(view).toString()));
const KINDS = Object.keys(KIND_LABELS) as (keyof typeof KIND_LABELS)[];

describe('the audit log in the URL', () => {
  it('round-trips the actor and the kind of target, and leaves out what is not set', () => {
    fc.assert(
      fc.property(
        fc.record({
          actor: fc.option(fc.uuid(), { nil: null }),
          kind: fc.option(fc.constantFrom(...KINDS), { nil: null }),
        }),
        (view) => {
          expect(viaLink(view)).toEqual(view);
        },
      ),
    );
    expect(auditViewCodec.write({ actor: null, kind: null }).toString()).toBe('');
  });

  it('reads an actor that is not a key id, or an unknown kind, as no filter', () => {
    expect(auditViewCodec.parse(new URLSearchParams('actor=ada&kind=spans'))).toEqual({ actor: null, kind: null });
    expect(auditViewCodec.parse(new URLSearchParams('kind=toString'))).toEqual({ actor: null, kind: null });
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('actor', 'kind'), fc.string()), (params) => {
        const view = auditViewCodec.parse(new URLSearchParams(params));
        expect(viaLink(view)).toEqual(view);
      }),
    );
  });
});
