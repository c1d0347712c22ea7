import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, liveRowFits } from './trace-view';

describe('liveRowFits', () => {
  it('puts a new trace at the top only of a newest-first view it certainly belongs to', () => {
    expect(liveRowFits(DEFAULT_VIEW, { status: 'success' })).toBe(true);
    expect(liveRowFits({ ...DEFAULT_VIEW, status: 'error' }, { status: 'success' })).toBe(false);
    // Another order, a search or a filter: the server places it.
    expect(liveRowFits({ ...DEFAULT_VIEW, sort: 'oldest' }, { status: 'success' })).toBeNull();
    expect(liveRowFits({ ...DEFAULT_VIEW, sort: 'slowest' }, { status: 'success' })).toBeNull();
    expect(liveRowFits({ ...DEFAULT_VIEW, search: 'refund' }, { status: 'success' })).toBeNull();
  });
});
