import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promptsCodec, TABS, type PromptsView } from './url-state';

const viaLink = (view: PromptsView) => promptsCodec.parse(new URLSearchParams(promptsCodec.write(view).toString()));

describe('the prompts page in the URL', () => {
  it('round-trips the prompt, the tab and the version', () => {
    fc.assert(
      fc.property(
        fc.record({
          tab: fc.constantFrom(...TABS),
          name: fc.option(fc.string(), { nil: null }),
          version: fc.option(fc.string(), { nil: null }),
        }),
        (view) => {
          expect(viaLink(view)).toEqual(view);
        },
      ),
    );
  });

  it('reads an unknown tab as the versions', () => {
    expect(promptsCodec.parse(new URLSearchParams('tab=history&name=triage'))).toEqual({
      tab: 'versions',
      name: 'triage',
      version: null,
    });
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('tab', 'name', 'version'), fc.string()), (params) => {
        const view = promptsCodec.parse(new URLSearchParams(params));
        expect(viaLink(view)).toEqual(view);
      }),
    );
  });
});
