import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { axisTicks } from './timeline-axis';

/** Where each label is drawn, in pixels: the start's from its point, the end's up to it, the others centred. */
function extents(total: number, width: number) {
  return axisTicks(total, width).map(({ at, label }) => {
    const w = label.length * 7.5;
    const x = at * width;
    return at === 0 ? [x, x + w] : at === 1 ? [x - w, x] : [x - w / 2, x + w / 2];
  });
}

describe("the timeline's axis", () => {
  it('never overlaps its labels, and stays inside the axis, whatever the width and the duration', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-5, max: 7200, noNaN: true }),
        fc.integer({ min: 1, max: 3000 }),
        (total, width) => {
          const spans = extents(total, width);
          for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
          for (const [from, to] of spans) {
            expect(from).toBeGreaterThanOrEqual(0);
            expect(to).toBeLessThanOrEqual(width);
          }
        },
      ),
    );
  });

  it('reads round times between the start and the end, more of them as the axis widens', () => {
    expect(axisTicks(4, 600).map((t) => t.label)).toEqual(['0', '1.00 s', '2.00 s', '3.00 s', '4.00 s']);
    expect(axisTicks(4, 250).map((t) => t.label)).toEqual(['0', '2.00 s', '4.00 s']);
    expect(axisTicks(40.2, 120).map((t) => t.label)).toEqual(['0', '40.2 s']);
    expect(axisTicks(0, 600).map((t) => t.label)).toEqual(['0']);
  });
});
