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
          },
    );
  }
  // A bucket off the grid (it should not happen) is not dropped.
  if (out.filter((p) => byMs.has(Date.parse(p.start))).length !== data.buckets.length) return data.buckets.map(point);
  return out;
}
