// A monitor's state from its metric: the window's value against its condition. Pure, so that the worker's
// evaluation and its tests judge alike.

export type MonitorCondition = { above: number } | { below: number } | { anomaly: { mads: number } };
export type MonitorReading = { value: number | null; samples: number };
export type MonitorJudgement = {
  state: 'ok' | 'firing' | 'no_data';
  value: number | null;
  /** The bound the condition compares with (above, below). */
  threshold?: number;
  /** The median of the previous days' values (anomaly), with their median absolute deviation. */
  baseline?: number | null;
  mad?: number | null;
};

/** Days of history an anomaly needs before it can be told from the usual (fewer: no_data). */
const ANOMALY_MIN_DAYS = 3;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * `current`: the window ending now; `history`: the same window on each previous day (anomaly only). A
 * reading from fewer than `minSamples` traces says nothing: no_data. An anomaly fires when the value lies
 * more than `mads` median absolute deviations from the median of the days with enough samples (a history
 * that never varies fires on any change).
 */
export function judgeMonitor(
  condition: MonitorCondition,
  minSamples: number,
  current: MonitorReading,
  history: readonly MonitorReading[] = [],
): MonitorJudgement {
  const { value } = current;
  if (value === null || current.samples < minSamples) return { state: 'no_data', value };
  if ('above' in condition)
    return { state: value > condition.above ? 'firing' : 'ok', value, threshold: condition.above };
  if ('below' in condition)
    return { state: value < condition.below ? 'firing' : 'ok', value, threshold: condition.below };
  const days = history.flatMap((h) => (h.value !== null && h.samples >= minSamples ? [h.value] : []));
  if (days.length < ANOMALY_MIN_DAYS) return { state: 'no_data', value, baseline: null, mad: null };
  const baseline = median(days);
  const mad = median(days.map((d) => Math.abs(d - baseline)));
  const firing = Math.abs(value - baseline) > condition.anomaly.mads * mad;
  return { state: firing ? 'firing' : 'ok', value, baseline, mad };
}
