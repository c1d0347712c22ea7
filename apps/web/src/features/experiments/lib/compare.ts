import type { Comparison, CompareMetric } from '../../../api/types';

/** Whether a difference from the baseline is for the better, the worse, or neither (no difference or noise). */
export type Tone = 'better' | 'worse' | 'same';

export function toneOf(metric: Pick<CompareMetric, 'better'>, difference: number | null | undefined): Tone {
  if (difference == null || difference === 0) return 'same';
  return difference > 0 === (metric.better === 'higher') ? 'better' : 'worse';
}

export const TONE_COLOR: Record<Tone, string> = { better: 'teal', worse: 'red', same: 'gray' };

/** What the test says of a comparison, in words: the verdict, with the pairs it rests on. */
export function verdict(metric: Pick<CompareMetric, 'better'>, c: Comparison): { label: string; tone: Tone } {
  if (c.p_value == null) return { label: c.pairs ? 'no difference' : 'no pairs', tone: 'same' };
  if (!c.significant) return { label: 'not significant', tone: 'same' };
  const tone = toneOf(metric, c.mean_difference);
  return { label: tone === 'worse' ? 'significantly worse' : 'significantly better', tone };
}

export function formatP(p: number | null): string {
  if (p == null) return '–';
  if (p < 0.001) return 'p < 0.001';
  return `p = ${p.toFixed(p < 0.01 ? 3 : 2)}`;
}

/** A signed number in the metric's unit, short: "+0.12", "−1.3 s", "+$0.0021". */
export function formatDifference(kind: CompareMetric['kind'], d: number | null): string {
  if (d == null) return '–';
  const sign = d > 0 ? '+' : d < 0 ? '−' : '±';
  const a = Math.abs(d);
  if (kind === 'latency') return `${sign}${a < 1 ? `${(a * 1000).toFixed(0)} ms` : `${a.toFixed(2)} s`}`;
  if (kind === 'cost') return `${sign}$${a < 0.01 ? a.toPrecision(2) : a.toFixed(4)}`;
  return `${sign}${a < 0.01 && a > 0 ? a.toPrecision(2) : a.toFixed(3)}`;
}

/** The value of a metric in one run's cell of a compared row. */
export function cellValue(
  metric: Pick<CompareMetric, 'kind' | 'name'>,
  cell: { scores: Record<string, number | null>; latency: number | null; cost: number | null },
): number | null {
  if (metric.kind === 'latency') return cell.latency;
  if (metric.kind === 'cost') return cell.cost;
  return cell.scores[metric.name] ?? null;
}
