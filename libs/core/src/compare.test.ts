import { describe, expect, it } from 'vitest';
import { bootstrapMeanCi, compareRuns, wilcoxonSignedRank, type RunSample } from './compare';

const p = (d: number[]) => wilcoxonSignedRank(Float64Array.from(d));
const seq = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

// Reference p-values from scipy 1.17.1, computed once (scipy is not installed in CI):
//   python3 -c "from scipy.stats import wilcoxon; print(repr(float(wilcoxon(d, correction=True).pvalue)))"
// with each d below spelled the same way in Python (range for seq, the same integer arithmetic and
// divisions, so that the doubles are identical). scipy's defaults otherwise: zero_method='wilcox',
// method='auto' (exact up to 50 pairs without ties or zeros, a permutation test up to 13 pairs with
// them, else the normal approximation with the tie correction).
const SCIPY: [string, number[], number][] = [
  ['n=1', [1.5], 1.0],
  ['n=2', [1, 2], 0.5],
  ['n=3', [1, -2, 3], 0.75],
  ['n=4', [1, 2, 3, 4], 0.125],
  ['n=5, one negative', [-1, 2, 3, 4, 5], 0.125],
  ['n=6, all positive: the smallest n with p < 0.05', [1, 2, 3, 4, 5, 6], 0.03125],
  ['n=6, mixed', [0.3, -0.1, 0.7, 1.2, -0.25, 2.0], 0.15625],
  ['ties, n=7 (permutation)', [1, 1, 2, -3, 2, 4, 5], 0.171875],
  ['zero differences, n=7 (permutation)', [0, 1, 2, -1.5, 3, 0, 4], 0.1875],
  ['all differences equal, n=8 (permutation)', seq(8, () => 0.5), 0.0078125],
  ['all differences equal, n=20 (normal, tie-corrected)', seq(20, () => 0.5), 8.553502651441746e-6],
  ['n=20 without ties (exact)', seq(20, (i) => ((((i + 1) * 7919) % 1009) - 500.5) / 100), 0.8694877624511719],
  ['ties and zeros, n=30 (normal)', seq(30, (i) => (((i + 1) * 37) % 11) - 4), 0.06333430616551648],
  [
    'zeros and ties, n=15 (normal)',
    [...seq(5, () => 0), ...seq(7, () => 0.25), ...seq(3, () => -0.25)],
    0.22727232064664205,
  ],
  ['large sample, n=200 (normal)', seq(200, (i) => (((i * 7919) % 1009) - 450) / 100), 0.0096711436273013],
  ['large sample far out in the tail, n=100', seq(100, (i) => i + 1), 3.955911608899571e-18],
];

describe('Wilcoxon signed-rank test', () => {
  it.each(SCIPY)('matches scipy: %s', (_name, d, expected) => {
    expect(p(d)! / expected).toBeCloseTo(1, 10);
  });
  it('has no p-value without a non-zero difference', () => {
    expect(p([0, 0, 0])).toBeNull();
    expect(p([0])).toBeNull();
  });
  it('is symmetric in the sign of the differences', () => {
    const d = seq(40, (i) => ((i * 13) % 17) - 7);
    expect(p(d)).toBeCloseTo(p(d.map((x) => -x))!, 15);
  });
});

describe('bootstrap interval of the mean difference', () => {
  const d = Float64Array.from(seq(200, (i) => (((i * 7919) % 1009) - 450) / 100));
  const mean = d.reduce((a, x) => a + x, 0) / d.length;
  it('contains the mean and is about as wide as the normal interval', () => {
    const [low, high] = bootstrapMeanCi(d);
    expect(low).toBeLessThan(mean);
    expect(high).toBeGreaterThan(mean);
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / (d.length - 1));
    expect((high - low) / ((2 * 1.96 * sd) / Math.sqrt(d.length))).toBeCloseTo(1, 0);
  });
  it('is reproducible, and depends on the seed', () => {
    expect(bootstrapMeanCi(d)).toEqual(bootstrapMeanCi(d));
    expect(bootstrapMeanCi(d, 1000, 7)).not.toEqual(bootstrapMeanCi(d));
  });
  it('collapses to the value when every difference is the same', () => {
    const [low, high] = bootstrapMeanCi(Float64Array.from([0.25, 0.25, 0.25]));
    expect(low).toBeCloseTo(0.25, 12);
    expect(high).toBeCloseTo(0.25, 12);
  });
});

describe('runs compared case by case', () => {
  const sample = (key: string, run: number, acc: unknown, latency: number | null, cost: number | null = null) => ({
    key,
    run,
    latency,
    cost,
    // A non-numeric score is left out by the read, and ignored here too.
    scores: (acc === undefined ? {} : { acc }) as Record<string, number>,
  });
  // Run A (the baseline) holds k1 twice and lacks k8; B lacks k3; C holds only k2, twice.
  const samples: RunSample[] = [
    sample('k1', 0, 0.2, 1.0, 0.01),
    sample('k1', 0, 0.4, 3.0, 0.03),
    sample('k2', 0, 0.5, 1.0),
    sample('k3', 0, 0.1, 2.0),
    sample('k4', 0, 0.6, 1.5),
    sample('k5', 0, 'bad', 1.0),
    sample('k6', 0, 0.7, null),
    sample('k7', 0, undefined, 1.2),
    sample('k1', 1, 0.9, 1.0, 0.01),
    sample('k2', 1, 0.5, 0.5),
    sample('k4', 1, 0.8, 1.5),
    sample('k5', 1, 0.9, 2),
    sample('k6', 1, 0.6, 1),
    { ...sample('k7', 1, 1.0, 1.0), scores: { acc: 1, f1: 0.5 } },
    sample('k8', 1, 0.3, 1.0),
    sample('k2', 2, 0.5, null),
    sample('k2', 2, 0.7, null),
  ];
  const result = compareRuns(samples, ['a', 'b', 'c'], 'a');
  const metric = (name: string) => result.metrics.find((m) => m.name === name)!;

  it('counts cases, the cases in every run, the repeated ones and the ones each run lacks', () => {
    expect(result.samples).toEqual([8, 7, 2]);
    expect(result.cases).toEqual({
      total: 8,
      in_all: 1,
      repeated: 2,
      missing: [
        { uuid: 'a', count: 1 },
        { uuid: 'b', count: 1 },
        { uuid: 'c', count: 7 },
      ],
    });
  });
  it('lists the numeric score names in order, then latency and cost, each with its better side', () => {
    expect(result.metrics.map((m) => [m.name, m.kind, m.better])).toEqual([
      ['acc', 'score', 'higher'],
      ['f1', 'score', 'higher'],
      ['latency', 'latency', 'lower'],
      ['cost', 'cost', 'lower'],
    ]);
  });
  it("averages a run's repeats of a case, and each run over its cases with a value", () => {
    const acc = metric('acc');
    expect(acc.runs.map((r) => r.n)).toEqual([5, 7, 1]);
    expect(acc.runs[0].mean).toBeCloseTo(2.2 / 5, 12); // k1 counts once, at 0.3; k5's 'bad' is no value
    expect(acc.runs[1].mean).toBeCloseTo(5.0 / 7, 12);
    expect(acc.runs[2].mean).toBeCloseTo(0.6, 12);
  });
  it('pairs the cases both runs have a value for, and counts improvements by the better side', () => {
    const [b, c] = metric('acc').comparisons;
    // B − A over k1, k2, k4, k6: 0.6, 0, 0.2, −0.1 (scipy: permutation test, p = 0.5).
    expect(b).toMatchObject({ uuid: 'b', pairs: 4, improved: 2, regressed: 1, unchanged: 1, significant: false });
    expect(b.mean_difference).toBeCloseTo(0.175, 12);
    expect(b.p_value).toBeCloseTo(0.5, 12);
    expect(b.ci_low! <= b.mean_difference! && b.mean_difference! <= b.ci_high!).toBe(true);
    expect(c).toMatchObject({ uuid: 'c', pairs: 1, improved: 1, regressed: 0, p_value: 1 });
    expect(c.mean_difference).toBeCloseTo(0.1, 12);
    // B − A latency over k1, k2, k4, k5, k7: −1, −0.5, 0, 1, −0.2: lower is better (scipy: p = 0.75).
    const latency = metric('latency').comparisons[0];
    expect(latency).toMatchObject({ pairs: 5, improved: 3, regressed: 1, unchanged: 1 });
    expect(latency.p_value).toBeCloseTo(0.75, 12);
    expect(metric('cost').comparisons[0]).toMatchObject({ pairs: 1, improved: 1, regressed: 0 });
  });
  it('answers nulls where a metric has no pairs', () => {
    const f1 = metric('f1');
    expect(f1.runs).toEqual([
      { uuid: 'a', mean: null, n: 0 },
      { uuid: 'b', mean: 0.5, n: 1 },
      { uuid: 'c', mean: null, n: 0 },
    ]);
    expect(f1.comparisons[0]).toEqual({
      uuid: 'b',
      pairs: 0,
      mean_difference: null,
      ci_low: null,
      ci_high: null,
      p_value: null,
      significant: false,
      improved: 0,
      regressed: 0,
      unchanged: 0,
    });
    expect(metric('latency').comparisons[1]).toMatchObject({ uuid: 'c', pairs: 0, p_value: null });
  });
  it('finds identical runs unchanged, with no p-value', () => {
    const same = compareRuns(
      [...samples.filter((s) => s.run === 1), ...samples.filter((s) => s.run === 1).map((s) => ({ ...s, run: 0 }))],
      ['a', 'b'],
      'b',
    );
    for (const m of same.metrics)
      expect(m.comparisons[0]).toMatchObject({
        uuid: 'a',
        regressed: 0,
        improved: 0,
        p_value: null,
        significant: false,
      });
    expect(same.metrics[0].comparisons[0]).toMatchObject({ pairs: 7, unchanged: 7, mean_difference: 0, ci_low: 0 });
  });
  it('finds a consistent improvement over many cases significant', () => {
    const many = seq(40, (i) => [
      sample(`k${i}`, 0, (i % 10) / 10, 1),
      sample(`k${i}`, 1, (i % 10) / 10 + (i % 4 === 0 ? -0.05 : 0.1), 1),
    ]).flat();
    const [acc] = compareRuns(many, ['a', 'b'], 'a').metrics;
    expect(acc.comparisons[0]).toMatchObject({ pairs: 40, improved: 30, regressed: 10, significant: true });
    expect(acc.comparisons[0].ci_low).toBeGreaterThan(0);
  });
});
