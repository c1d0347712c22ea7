import { describe, expect, it } from 'vitest';
import { helpfulness, tone } from '../../../test/fixtures';
import { choiceOf, isControl, isTyping, progressOf, traceIdsOf } from './queues';

describe('annotation queue helpers', () => {
  it('maps a number key to an option, or to a score the range holds', () => {
    expect(choiceOf(tone, 1)).toEqual({ value: 'friendly' });
    expect(choiceOf(tone, 4)).toBeNull();
    expect(choiceOf(helpfulness, 5)).toEqual({ score: 5 });
    expect(choiceOf(helpfulness, 6)).toBeNull();
    expect(choiceOf({ ...helpfulness, min: null, max: null }, 9)).toEqual({ score: 9 });
    expect(choiceOf({ ...tone, options: null }, 1)).toBeNull(); // free text
  });

  it('counts done and skipped items as reviewed', () => {
    expect(progressOf({ pending: 6, in_review: 1, done: 2, skipped: 1 })).toEqual({
      total: 10,
      finished: 3,
      percent: 30,
    });
    expect(progressOf({ pending: 0, in_review: 0, done: 0, skipped: 0 }).percent).toBe(0);
  });

  it('reads pasted trace ids once each', () => {
    expect(traceIdsOf(' a\nb, c  a\n')).toEqual(['a', 'b', 'c']);
  });

  it('tells fields and controls from the rest of the page', () => {
    const page = document.createElement('div');
    page.innerHTML =
      '<input id="i"><textarea id="t"></textarea><button id="b"><span id="s"></span></button><p id="p"></p>';
    const at = (id: string) => page.querySelector(`#${id}`);
    expect([at('i'), at('t'), at('b'), at('p')].map(isTyping)).toEqual([true, true, false, false]);
    expect([at('s'), at('p')].map(isControl)).toEqual([true, false]);
  });
});
