// How far two raters agree on the same spans: a judge and people, or two people. Scores by Spearman's rank
// correlation and the mean absolute difference; values (categories) by Cohen's kappa and the confusion
// matrix. Each figure comes with a 95% percentile bootstrap interval over the spans (seeded: reproducible).

const RESAMPLES = 1000;
const SEED = 20261126;
const ALPHA = 0.05;

/** Average ranks (1-based), ties sharing the mean of their ranks. */
function ranks(x: Float64Array): Float64Array {
  const order = Array.from(x.keys()).sort((i, j) => x[i] - x[j]);
  const out = new Float64Array(x.length);
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && x[order[end]] === x[order[start]]) end++;
    for (let k = start; k < end; k++) out[order[k]] = (start + end + 1) / 2;
    start = end;
  }
  return out;
}

function pearson(x: Float64Array, y: Float64Array): number | null {
  const n = x.length;
  let mx = 0,
    my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
    syy += (y[i] - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}

/** Spearman's rank correlation (scipy.stats.spearmanr's statistic); null with fewer than 2 pairs or no spread. */
export function spearman(x: Float64Array, y: Float64Array): number | null {
  return x.length < 2 ? null : pearson(ranks(x), ranks(y));
}

function meanAbsDiff(x: Float64Array, y: Float64Array): number | null {
  if (!x.length) return null;
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.abs(x[i] - y[i]);
  return sum / x.length;
}

/** Counts of (a's label, b's label), rows by a, columns by b, in the order of `labels`. */
export function confusionMatrix(a: readonly string[], b: readonly string[], labels: readonly string[]): number[][] {
  const at = new Map(labels.map((l, i) => [l, i]));
  const m = labels.map(() => labels.map(() => 0));
  for (let i = 0; i < a.length; i++) {
    const r = at.get(a[i]),
      c = at.get(b[i]);
    if (r !== undefined && c !== undefined) m[r][c]++;
  }
  return m;
}

/** Cohen's kappa (sklearn.metrics.cohen_kappa_score); null with no pairs, or when chance agreement is certain. */
export function cohenKappa(a: readonly string[], b: readonly string[], labels: readonly string[]): number | null {
  const m = confusionMatrix(a, b, labels);
  const n = m.reduce((s, row) => s + row.reduce((t, v) => t + v, 0), 0);
  if (!n) return null;
  let observed = 0,
    chance = 0;
  for (let i = 0; i < labels.length; i++) {
    observed += m[i][i];
    const row = m[i].reduce((s, v) => s + v, 0);
    const col = m.reduce((s, r) => s + r[i], 0);
    chance += (row / n) * (col / n);
  }
  return chance === 1 ? null : (observed / n - chance) / (1 - chance);
}

function quantileOfSorted(sorted: number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

/**
 * A 95% percentile bootstrap interval of `statistic` over `n` pairs: the pairs resampled with replacement
 * (xorshift32, seeded), resamples where the statistic is undefined left out. Null when none is defined.
 */
export function bootstrapInterval(
  n: number,
  statistic: (picked: Int32Array) => number | null,
  resamples = RESAMPLES,
  seed = SEED,
): [number, number] | null {
  if (n < 2) return null;
  const picked = new Int32Array(n);
  const values: number[] = [];
  let x = seed | 0 || 1;
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      picked[i] = ((x >>> 0) * (n / 2 ** 32)) | 0;
    }
    const v = statistic(picked);
    if (v !== null && Number.isFinite(v)) values.push(v);
  }
  if (!values.length) return null;
  values.sort((p, q) => p - q);
  return [quantileOfSorted(values, ALPHA / 2), quantileOfSorted(values, 1 - ALPHA / 2)];
}

export type ScoreAgreement = {
  n: number;
  spearman: number | null;
  spearman_ci: [number, number] | null;
  mean_abs_diff: number | null;
  mean_abs_diff_ci: [number, number] | null;
};

export type ValueAgreement = {
  n: number;
  kappa: number | null;
  kappa_ci: [number, number] | null;
  labels: string[];
  /** Rows by the first rater's label, columns by the second's. */
  confusion: number[][];
};

/** Agreement of two raters' scores on the same spans (pairs in one order). */
export function scoreAgreement(pairs: readonly [number, number][]): ScoreAgreement {
  const x = Float64Array.from(pairs, (p) => p[0]);
  const y = Float64Array.from(pairs, (p) => p[1]);
  const pick = (s: (a: Float64Array, b: Float64Array) => number | null) => (idx: Int32Array) =>
    s(
      Float64Array.from(idx, (i) => x[i]),
      Float64Array.from(idx, (i) => y[i]),
    );
  return {
    n: pairs.length,
    spearman: spearman(x, y),
    spearman_ci: bootstrapInterval(pairs.length, pick(spearman)),
    mean_abs_diff: meanAbsDiff(x, y),
    mean_abs_diff_ci: bootstrapInterval(pairs.length, pick(meanAbsDiff)),
  };
}

/** Agreement of two raters' values on the same spans; `labels` orders the confusion matrix. */
export function valueAgreement(pairs: readonly [string, string][], labels: readonly string[]): ValueAgreement {
  const all = [...new Set([...labels, ...pairs.flat()])];
  const a = pairs.map((p) => p[0]);
  const b = pairs.map((p) => p[1]);
  return {
    n: pairs.length,
    kappa: cohenKappa(a, b, all),
    kappa_ci: bootstrapInterval(pairs.length, (idx) =>
      cohenKappa(
        Array.from(idx, (i) => a[i]),
        Array.from(idx, (i) => b[i]),
        all,
      ),
    ),
    labels: all,
    confusion: confusionMatrix(a, b, all),
  };
}

type Criterion = { kind: 'score' | 'value'; min: number | null; max: number | null; options: string[] | null };
type Annotated = {
  trace_id: string;
  /** Where the span is shown: its trace's root and its project (null for a span stored without one). */
  root_trace_id: string;
  project_uuid: string | null;
  user_id: string;
  score: number | null;
  value: string | null;
  judge: number | null;
};

/**
 * The pairs agreement is measured on, from each span's annotations (sorted by span, then user): the
 * people's rating of a span (the mean of their scores, within [0, 1] when the criterion has bounds; the
 * most given value) beside the judge's score (a value criterion's options read from the lowest score to
 * the highest: score s is option round(s × (k − 1))); and the first two people's ratings of each span
 * two people rated. `disagreements`: the spans where the judge is furthest from the people.
 */
export function agreementPairs(criterion: Criterion, rows: readonly Annotated[]) {
  const bySpan = new Map<string, Annotated[]>();
  for (const r of rows) bySpan.set(r.trace_id, [...(bySpan.get(r.trace_id) ?? []), r]);
  const scaled = (s: number) =>
    criterion.min != null && criterion.max != null && criterion.max > criterion.min
      ? (s - criterion.min) / (criterion.max - criterion.min)
      : s;
  const options = criterion.options ?? [];
  const judgeValue = (s: number) =>
    options.length ? options[Math.min(options.length - 1, Math.max(0, Math.round(s * (options.length - 1))))] : null;
  const mostGiven = (values: string[]) => {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    return [...counts].sort((p, q) => q[1] - p[1] || p[0].localeCompare(q[0]))[0]?.[0] ?? null;
  };
  const score = { judge: [] as [number, number][], people: [] as [number, number][] };
  const value = { judge: [] as [string, string][], people: [] as [string, string][] };
  type Disagreement = Pick<Annotated, 'trace_id' | 'root_trace_id' | 'project_uuid'> & {
    people: number | string;
    judge: number | string;
    distance: number;
  };
  const disagreements: Disagreement[] = [];
  for (const [trace_id, list] of bySpan) {
    const { judge, root_trace_id, project_uuid } = list[0];
    const span = { trace_id, root_trace_id, project_uuid };
    if (criterion.kind === 'score') {
      const rated = list.filter((r) => r.score !== null).map((r) => scaled(r.score!));
      if (rated.length >= 2) score.people.push([rated[0], rated[1]]);
      if (!rated.length || judge === null) continue;
      const people = rated.reduce((s, v) => s + v, 0) / rated.length;
      score.judge.push([people, judge]);
      disagreements.push({ ...span, people, judge, distance: Math.abs(people - judge) });
    } else {
      const given = list.filter((r) => r.value !== null).map((r) => r.value!);
      if (given.length >= 2) value.people.push([given[0], given[1]]);
      const people = mostGiven(given);
      const label = judge === null ? null : judgeValue(judge);
      if (people === null || label === null) continue;
      value.judge.push([people, label]);
      if (people !== label) disagreements.push({ ...span, people, judge: label, distance: 1 });
    }
  }
  disagreements.sort((p, q) => q.distance - p.distance || p.trace_id.localeCompare(q.trace_id));
  return {
    input:
      criterion.kind === 'score'
        ? { kind: 'score' as const, ...score }
        : { kind: 'value' as const, labels: options, ...value },
    disagreements: disagreements.slice(0, 20).map(({ distance: _d, ...d }) => d),
  };
}
