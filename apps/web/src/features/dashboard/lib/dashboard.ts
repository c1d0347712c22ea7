import type { Dashboard } from '../../../api/types';

type Point = {
  start: string;
  traces: number;
  errors: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
  tokens: number;
  cost: number;
  /** Errors over traces; null in a bucket without traces (a gap in the line, not a 0%). */
  errorRate: number | null;
};

/** Every bucket of the window, empty ones too (the API leaves them out), so that the x axis is time. */
export function fillBuckets(data: Pick<Dashboard, 'from' | 'to' | 'bucket_seconds' | 'buckets'>): Point[] {
  const point = (b: Dashboard['buckets'][number]): Point => ({
    start: b.start,
    traces: b.traces,
    errors: b.errors,
    p50: b.latency_p50,
    p95: b.latency_p95,
    p99: b.latency_p99,
    tokens: b.input_tokens + b.output_tokens,
    cost: b.cost,
    errorRate: b.traces ? b.errors / b.traces : null,
  });
  const step = data.bucket_seconds * 1000;
  const from = Date.parse(data.from);
  const to = Date.parse(data.to);
  if (!data.buckets.length || !(step > 0) || !(to > from) || (to - from) / step > 1000) return data.buckets.map(point);
  const byMs = new Map(data.buckets.map((b) => [Date.parse(b.start), b]));
  // The grid of the API's buckets, aligned on the first one, from the bucket holding `from` on.
  const anchor = Date.parse(data.buckets[0]!.start);
  let t = anchor - Math.ceil((anchor - from) / step) * step;
  const out: Point[] = [];
  for (; t < to; t += step) {
    const b = byMs.get(t);
    out.push(
      b
        ? point(b)
        : {
            start: new Date(t).toISOString(),
            traces: 0,
            errors: 0,
            p50: null,
            p95: null,
            p99: null,
            tokens: 0,
            cost: 0,
            errorRate: null,
          },
    );
  }
  // A bucket off the grid (it should not happen) is not dropped.
  if (out.filter((p) => byMs.has(Date.parse(p.start))).length !== data.buckets.length) return data.buckets.map(point);
  return out;
}

/** The models a stacked chart shows one by one; the others are summed as one. */
const MODELS_STACKED = 6;
export const OTHER_MODELS = 'Other models';

/**
 * Cost by model on the grid of `points`: a row per bucket with each model's cost (0 in a bucket without its
 * calls, so that a stack has no hole), and the models in the order of the stack, costliest first. Past the
 * first few, the models are summed as OTHER_MODELS.
 */
export function costByModel(
  data: Pick<Dashboard, 'cost_by_model' | 'cost_by_model_buckets'>,
  points: readonly Pick<Point, 'start'>[],
): { models: string[]; rows: Record<string, string | number>[] } {
  const shown = data.cost_by_model.slice(0, MODELS_STACKED).map((m) => m.model);
  const others = data.cost_by_model.length > shown.length;
  const models = others ? [...shown, OTHER_MODELS] : shown;
  const empty = () => Object.fromEntries(models.map((m) => [m, 0]));
  const rows = new Map<number, Record<string, string | number>>(
    points.map((p) => [Date.parse(p.start), { start: p.start, ...empty() }]),
  );
  for (const b of data.cost_by_model_buckets) {
    const at = Date.parse(b.start);
    let row = rows.get(at);
    if (!row) rows.set(at, (row = { start: b.start, ...empty() }));
    const name = shown.includes(b.model) ? b.model : OTHER_MODELS;
    row[name] = Number(row[name] ?? 0) + b.cost;
  }
  return {
    models,
    rows: [...rows.entries()].sort(([a], [b]) => a - b).map(([, row]) => row),
  };
}
