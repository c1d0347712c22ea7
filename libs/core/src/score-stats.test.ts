import { describe, expect, it } from 'vitest';
import { mergeScoreSummaries, summarizeScores } from './score-stats';

describe('score summaries', () => {
  it('counts, sums and bounds each score name, ignoring malformed items', () => {
    const s = summarizeScores([
      [
        { name: 'acc', score: 1 },
        { name: 'f1', score: 0.5 },
      ],
      [{ name: 'acc', score: 0 }, { name: 'bad', score: 'x' }, null],
      [],
    ]);
    expect(s).toEqual({ acc: { count: 2, sum: 1, min: 0, max: 1 }, f1: { count: 1, sum: 0.5, min: 0.5, max: 0.5 } });
  });
  it('merges chunk summaries into the summary of the whole', () => {
    const lists = Array.from({ length: 100 }, (_, i) => [{ name: 'acc', score: i / 100 }]);
    const whole = summarizeScores(lists);
    const merged = mergeScoreSummaries([summarizeScores(lists.slice(0, 30)), summarizeScores(lists.slice(30))]);
    expect(merged.acc.count).toBe(whole.acc.count);
    expect(merged.acc.sum).toBeCloseTo(whole.acc.sum, 10);
    expect(merged.acc.min).toBe(0);
    expect(merged.acc.max).toBe(0.99);
  });
});
