import { describe, expect, it } from 'vitest';
import { ProviderError } from '@sightline/llm';
import { failureOf } from './provider-call';
import { targetOrder } from './route';

const route = (strategy: 'fallback' | 'loadbalance', weights: (number | undefined)[]) => ({
  name: 'r',
  strategy,
  retry_on: [],
  targets: weights.map((weight, i) => ({ provider: 'openai', model: `m${i}`, ...(weight && { weight }) })),
});

describe('targetOrder', () => {
  it('keeps a fallback route’s order, whatever is cooling down', () => {
    expect(targetOrder(route('fallback', [1, 1, 1]), [true, false, false])).toEqual([0, 1, 2]);
  });

  it('draws load-balanced targets in proportion to their weights, each once', () => {
    const firsts = [0, 0, 0];
    for (let draw = 0; draw < 6000; draw++) {
      const order = targetOrder(route('loadbalance', [3, 1, 2]), []);
      expect([...order].sort()).toEqual([0, 1, 2]);
      firsts[order[0]]++;
    }
    expect(firsts[0] / 6000).toBeCloseTo(3 / 6, 1);
    expect(firsts[1] / 6000).toBeCloseTo(1 / 6, 1);
    expect(firsts[2] / 6000).toBeCloseTo(2 / 6, 1);
  });

  it('draws the targets cooling down after every other', () => {
    for (let draw = 0; draw < 50; draw++)
      expect(targetOrder(route('loadbalance', [1e6, 1, undefined]), [true, false, true]).slice(0, 1)).toEqual([1]);
  });

  it('picks by the random draw it is given: the one whose share the draw falls in', () => {
    expect(targetOrder(route('loadbalance', [1, 1]), [], () => 0.25)[0]).toBe(0);
    expect(targetOrder(route('loadbalance', [1, 1]), [], () => 0.75)[0]).toBe(1);
    // Rounding leaves this draw past the end of every share: it belongs to the last.
    expect(targetOrder(route('loadbalance', [0.1, 0.2]), [], () => 1 - Number.EPSILON)[0]).toBe(1);
  });
});

describe('failureOf', () => {
  it('names the failures a route may move on from, and no other', () => {
    expect(failureOf(new ProviderError('x', true, 429))).toBe('429');
    expect(failureOf(new ProviderError('x', true, 500))).toBe('5xx');
    expect(failureOf(new ProviderError('x', true, 529))).toBe('5xx');
    expect(failureOf(new ProviderError('timed out', true))).toBe('timeout');
    expect(failureOf(new ProviderError('x', false, 400))).toBeNull();
    expect(failureOf(new ProviderError('no key', false))).toBeNull();
    expect(failureOf(new Error('x'))).toBeNull();
  });
});
