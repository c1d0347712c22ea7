// Experiment runs compared case by case: each run's samples are aligned by test case, and every other run
// is held against a baseline over the cases both have, with a bootstrap interval of the mean difference and
// a Wilcoxon signed-rank test. Pure and CPU-bound: the API runs it on the thread pool.

/** One sample (root trace) of a run: its case key, its numeric scores by name, latency (seconds) and trace cost. */
export type RunSample = {
  key: string;
  run: number;
  latency: number | null;
  cost: number | null;
  scores: Record<string, number>;
};

type MetricKind = 'score' | 'latency' | 'cost';
type RunComparison = {
  uuid: string;
  pairs: number;
  mean_difference: number | null;
  ci_low: number | null;
  ci_high: number | null;
  p_value: number | null;
  significant: boolean;
  improved: number;
  regressed: number;
  unchanged: number;
};
type MetricComparison = {
  name: string;
  kind: MetricKind;
  better: 'higher' | 'lower';
  runs: { uuid: string; mean: number | null; n: number }[];
  comparisons: RunComparison[];
};
export type RunsComparison = {
  /** Samples of each run, in the order of `runs`. */
  samples: number[];
  cases: { total: number; in_all: number; repeated: number; missing: { uuid: string; count: number }[] };
  metrics: MetricComparison[];
};

export const COMPARE_ALPHA = 0.05;
/**
 * Bootstrap resamples per interval. 1,000 is the usual floor for a 95% percentile interval: its end points
 * then wander by about 2% of its width from one seed to another. The cost is resamples x pairs for each
 * metric and non-baseline run: 5 runs of 10,000 cases with two scores, latency and cost make 16 intervals
 * of 10M draws, about 0.3 s on one thread: under a quarter of the whole compare (1.3 s; its target is 2 s).
 * Twice as many would cost another 0.3 s for end points that move by 1.5% of the width instead of 2%.
 */
const RESAMPLES = 1000;
// A fixed seed: the same runs always get the same interval.
const SEED = 0x5eed_c0de;

/** Per metric, each case's value in each run (cell = case * runs + run): the mean over the run's repeats. */
type Cells = { sum: Float64Array; n: Uint32Array };

function newCells(size: number): Cells {
  return { sum: new Float64Array(size), n: new Uint32Array(size) };
}

function addValue(cells: Cells, cell: number, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) return;
  cells.sum[cell] += value;
  cells.n[cell]++;
}

/** Aligns the samples by case: how many samples each run has of each case, and each metric's sums. */
function alignCases(samples: readonly RunSample[], runs: number) {
  const caseIndex = new Map<string, number>();
  const caseOf = samples.map((s) => {
    let c = caseIndex.get(s.key);
    if (c === undefined) caseIndex.set(s.key, (c = caseIndex.size));
    return c;
  });
  const size = caseIndex.size * runs;
  const counts = new Uint32Array(size);
  const latency = newCells(size);
  const cost = newCells(size);
  const scores = new Map<string, Cells>();
  samples.forEach((s, i) => {
    const cell = caseOf[i] * runs + s.run;
    counts[cell]++;
    addValue(latency, cell, s.latency);
    addValue(cost, cell, s.cost);
    for (const [name, score] of Object.entries(s.scores)) {
      if (typeof score !== 'number' || !Number.isFinite(score)) continue;
      let cells = scores.get(name);
      if (!cells) scores.set(name, (cells = newCells(size)));
      addValue(cells, cell, score);
    }
  });
  return { cases: caseIndex.size, counts, latency, cost, scores };
}

function caseCounts(counts: Uint32Array, cases: number, runUuids: readonly string[]): RunsComparison['cases'] {
  const runs = runUuids.length;
  const missing = new Array<number>(runs).fill(0);
  let inAll = 0,
    repeated = 0;
  for (let c = 0; c < cases; c++) {
    let present = 0,
      isRepeated = false;
    for (let r = 0; r < runs; r++) {
      const n = counts[c * runs + r];
      if (n) present++;
      else missing[r]++;
      if (n > 1) isRepeated = true;
    }
    if (present === runs) inAll++;
    if (isRepeated) repeated++;
  }
  return {
    total: cases,
    in_all: inAll,
    repeated,
    missing: runUuids.map((uuid, r) => ({ uuid, count: missing[r] })),
  };
}

/** One run's value of each case (NaN where it has none). */
function runValues(cells: Cells, cases: number, runs: number, run: number): Float64Array {
  const values = new Float64Array(cases);
  for (let c = 0; c < cases; c++) {
    const cell = c * runs + run;
    values[c] = cells.n[cell] ? cells.sum[cell] / cells.n[cell] : NaN;
  }
  return values;
}

function runMean(values: Float64Array): { mean: number | null; n: number } {
  let sum = 0,
    n = 0;
  for (const v of values) {
    if (Number.isNaN(v)) continue;
    sum += v;
    n++;
  }
  return { mean: n ? sum / n : null, n };
}

function compareRun(uuid: string, base: Float64Array, run: Float64Array, better: 'higher' | 'lower'): RunComparison {
  const diffs: number[] = [];
  for (let c = 0; c < base.length; c++)
    if (!Number.isNaN(base[c]) && !Number.isNaN(run[c])) diffs.push(run[c] - base[c]);
  const d = Float64Array.from(diffs);
  const up = d.filter((x) => x > 0).length,
    down = d.filter((x) => x < 0).length;
  const pValue = d.length ? wilcoxonSignedRank(d) : null;
  const [ciLow, ciHigh] = d.length ? bootstrapMeanCi(d) : [null, null];
  return {
    uuid,
    pairs: d.length,
    mean_difference: d.length ? d.reduce((a, x) => a + x, 0) / d.length : null,
    ci_low: ciLow,
    ci_high: ciHigh,
    p_value: pValue,
    significant: pValue !== null && pValue < COMPARE_ALPHA,
    improved: better === 'higher' ? up : down,
    regressed: better === 'higher' ? down : up,
    unchanged: d.length - up - down,
  };
}

/**
 * Compares runs (named by their experiment's uuid; a sample's `run` indexes `runUuids`) case by case
 * against the baseline run. Each metric (every numeric score name, then latency and cost) gives each
 * run's mean over its cases that have a value, and for each other run the paired statistics over the
 * cases both runs have a value for. A run that holds a case several times counts it once, at the mean.
 */
export function compareRuns(
  samples: readonly RunSample[],
  runUuids: readonly string[],
  baseline: string,
): RunsComparison {
  const runs = runUuids.length;
  const b = runUuids.indexOf(baseline);
  const aligned = alignCases(samples, runs);
  const metric = (name: string, kind: MetricKind, cells: Cells): MetricComparison => {
    const better = kind === 'score' ? 'higher' : 'lower';
    const values = runUuids.map((_, r) => runValues(cells, aligned.cases, runs, r));
    return {
      name,
      kind,
      better,
      runs: runUuids.map((uuid, r) => ({ uuid, ...runMean(values[r]) })),
      comparisons: runUuids.flatMap((uuid, r) => (r === b ? [] : [compareRun(uuid, values[b], values[r], better)])),
    };
  };
  const scoreNames = [...aligned.scores.keys()].sort();
  const samplesPerRun = new Array<number>(runs).fill(0);
  for (const s of samples) samplesPerRun[s.run]++;
  return {
    samples: samplesPerRun,
    cases: caseCounts(aligned.counts, aligned.cases, runUuids),
    metrics: [
      ...scoreNames.map((name) => metric(name, 'score', aligned.scores.get(name)!)),
      metric('latency', 'latency', aligned.latency),
      metric('cost', 'cost', aligned.cost),
    ],
  };
}

/** The q-quantile of sorted values, interpolated linearly between order statistics (numpy's default). */
function quantileOfSorted(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

/**
 * A 95% percentile bootstrap interval of the mean of `d` (at least one value), seeded: reproducible. The
 * draws come from xorshift32 written into the loop (mulberry32 called per draw made it three times slower):
 * the index is taken from its high bits, its better ones.
 */
export function bootstrapMeanCi(d: Float64Array, resamples = RESAMPLES, seed = SEED): [number, number] {
  const n = d.length;
  const scale = n / 2 ** 32;
  const means = new Float64Array(resamples);
  let x = seed | 0 || 1;
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      sum += d[((x >>> 0) * scale) | 0];
    }
    means[b] = sum / n;
  }
  means.sort();
  return [quantileOfSorted(means, COMPARE_ALPHA / 2), quantileOfSorted(means, 1 - COMPARE_ALPHA / 2)];
}

/** Average ranks (1-based) of |x|, ties sharing the mean of their ranks, and the ties' Σ(t³ − t). */
function absoluteRanks(x: Float64Array): { ranks: Float64Array; tieTerm: number } {
  const order = Array.from(x.keys()).sort((i, j) => Math.abs(x[i]) - Math.abs(x[j]));
  const ranks = new Float64Array(x.length);
  let tieTerm = 0;
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && Math.abs(x[order[end]]) === Math.abs(x[order[start]])) end++;
    const t = end - start;
    for (let k = start; k < end; k++) ranks[order[k]] = (start + end + 1) / 2;
    tieTerm += t ** 3 - t;
    start = end;
  }
  return { ranks, tieTerm };
}

/**
 * The exact two-sided p-value of R+ over every assignment of signs to the ranks. Ranks are halves at
 * worst, so doubled they are integers and the null distribution is a subset-sum count; counts stay
 * below 2^50 (n ≤ 50), exact in doubles.
 */
function exactPValue(ranks: Float64Array, rPlus: number): number {
  const doubled = Array.from(ranks, (r) => Math.round(2 * r));
  const total = doubled.reduce((a, w) => a + w, 0);
  const counts = new Float64Array(total + 1);
  counts[0] = 1;
  for (const w of doubled) for (let s = total; s >= w; s--) counts[s] += counts[s - w];
  const observed = Math.round(2 * rPlus);
  let below = 0,
    above = 0;
  for (let s = 0; s <= total; s++) {
    if (s <= observed) below += counts[s];
    if (s >= observed) above += counts[s];
  }
  return Math.min(1, (2 * Math.min(below, above)) / 2 ** ranks.length);
}

/** erfc(x) for x ≥ 0 to about 1e-14 relative: a series of positive terms below 2, a continued fraction above. */
function erfc(x: number): number {
  if (x < 2) {
    // erf(x) = 2/√π · e^(−x²) · Σ 2^k x^(2k+1) / (1·3·…·(2k+1))
    let term = x,
      sum = x;
    for (let k = 1; term > sum * 1e-17; k++) {
      term *= (2 * x * x) / (2 * k + 1);
      sum += term;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x) * sum;
  }
  // erfc(x) = e^(−x²)/√π / (x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …)))), by Lentz's method.
  let f = x,
    c = x,
    d = 0;
  for (let k = 1; k < 500; k++) {
    d = 1 / (x + (k / 2) * d);
    c = x + k / 2 / c;
    f *= c * d;
    if (Math.abs(c * d - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** The normal approximation's two-sided p-value, with the tie correction and a continuity correction. */
function normalPValue(n: number, rPlus: number, tieTerm: number): number {
  const mean = (n * (n + 1)) / 4;
  const se = Math.sqrt((n * (n + 1) * (2 * n + 1) - tieTerm / 2) / 24);
  let z = (rPlus - mean) / se;
  z -= (Math.sign(z) * 0.5) / se;
  return erfc(Math.abs(z) / Math.SQRT2);
}

/**
 * The two-sided p-value of the Wilcoxon signed-rank test of paired differences, as
 * scipy.stats.wilcoxon(d, correction=True) gives it (zero_method 'wilcox', method 'auto'): zero
 * differences are dropped; up to 50 pairs without ties or zeros, and up to 13 pairs with them, the null
 * distribution is enumerated exactly (scipy's exact and permutation tests); otherwise the normal
 * approximation. Null without a non-zero difference. With n non-zero differences the smallest p-value is
 * 2/2^n, so p < 0.05 needs n ≥ 6: below that no difference, however large, is significant.
 */
export function wilcoxonSignedRank(d: Float64Array): number | null {
  const nonZero = d.filter((x) => x !== 0);
  if (!nonZero.length) return null;
  const { ranks, tieTerm } = absoluteRanks(nonZero);
  let rPlus = 0;
  nonZero.forEach((x, i) => {
    if (x > 0) rPlus += ranks[i];
  });
  const clean = tieTerm === 0 && nonZero.length === d.length;
  const exact = d.length <= 50 && (clean || d.length <= 13);
  return exact ? exactPValue(ranks, rPlus) : normalPValue(nonZero.length, rPlus, tieTerm);
}
