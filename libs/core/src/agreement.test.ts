import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrapInterval, cohenKappa, confusionMatrix, scoreAgreement, spearman, valueAgreement } from './agreement';

// Reference values from SciPy 1.10.1 and scikit-learn 1.2.1 (Debian bookworm's python3-scipy, python3-sklearn).
const x = [0.1, 0.4, 0.4, 0.9, 0.7, 0.2, 1.0, 0.55, 0.3, 0.8];
const y = [0.2, 0.35, 0.5, 0.8, 0.9, 0.1, 0.95, 0.5, 0.45, 0.6];
const a = ['good', 'good', 'bad', 'bad', 'ok', 'good', 'ok', 'bad', 'good', 'ok', 'bad', 'good'];
const b = ['good', 'ok', 'bad', 'good', 'ok', 'good', 'bad', 'bad', 'good', 'ok', 'bad', 'ok'];

describe('agreement statistics', () => {
  it("compute Spearman's rho as scipy does, ties included", () => {
    // scipy.stats.spearmanr(x, y).statistic
    expect(spearman(Float64Array.from(x), Float64Array.from(y))).toBeCloseTo(0.9237804878048782, 12);
    // scipy.stats.spearmanr([1,2,2,3,3,3,4,5], [2,2,1,3,4,3,5,5]).statistic
    expect(spearman(Float64Array.of(1, 2, 2, 3, 3, 3, 4, 5), Float64Array.of(2, 2, 1, 3, 4, 3, 5, 5))).toBeCloseTo(
      0.918821785756253,
      12,
    );
    expect(spearman(Float64Array.of(1, 1, 1), Float64Array.of(1, 2, 3))).toBeNull();
  });

  it("compute Cohen's kappa and the confusion matrix as scikit-learn does", () => {
    // sklearn.metrics.cohen_kappa_score(a, b)
    expect(cohenKappa(a, b, ['bad', 'ok', 'good'])).toBeCloseTo(0.5, 12);
    // sklearn.metrics.confusion_matrix(a, b, labels=['bad', 'ok', 'good']).tolist()
    expect(confusionMatrix(a, b, ['bad', 'ok', 'good'])).toEqual([
      [3, 0, 1],
      [1, 2, 0],
      [0, 2, 3],
    ]);
    // sklearn.metrics.cohen_kappa_score(['yes','no','yes','yes','no'], ['yes','no','no','yes','no'])
    expect(cohenKappa(['yes', 'no', 'yes', 'yes', 'no'], ['yes', 'no', 'no', 'yes', 'no'], ['yes', 'no'])).toBeCloseTo(
      0.6153846153846154,
      12,
    );
  });

  it('give intervals that hold the estimate, reproducibly', () => {
    const scores = scoreAgreement(x.map((v, i) => [v, y[i]]));
    expect(scores.spearman_ci![0]).toBeLessThanOrEqual(scores.spearman!);
    expect(scores.spearman_ci![1]).toBeGreaterThanOrEqual(scores.spearman!);
    expect(scores.mean_abs_diff).toBeCloseTo(x.reduce((s, v, i) => s + Math.abs(v - y[i]), 0) / x.length, 12);
    expect(scoreAgreement(x.map((v, i) => [v, y[i]]))).toEqual(scores);
    const values = valueAgreement(
      a.map((v, i) => [v, b[i]]),
      ['bad', 'ok', 'good'],
    );
    expect(values).toMatchObject({ n: 12, kappa: expect.closeTo(0.5, 12), labels: ['bad', 'ok', 'good'] });
    expect(values.kappa_ci![0]).toBeLessThan(0.5);
    expect(values.kappa_ci![1]).toBeGreaterThan(0.5);
  });

  it('bound every bootstrap interval by the statistic’s own range', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), {
          minLength: 2,
          maxLength: 40,
        }),
        (pairs) => {
          const r = scoreAgreement(pairs as [number, number][]);
          if (r.spearman_ci) {
            expect(r.spearman_ci[0]).toBeGreaterThanOrEqual(-1 - 1e-9);
            expect(r.spearman_ci[1]).toBeLessThanOrEqual(1 + 1e-9);
            expect(r.spearman_ci[0]).toBeLessThanOrEqual(r.spearman_ci[1]);
          }
          expect(r.mean_abs_diff_ci![0]).toBeGreaterThanOrEqual(0);
        },
      ),
    );
    expect(bootstrapInterval(1, () => 1)).toBeNull();
  });
});
