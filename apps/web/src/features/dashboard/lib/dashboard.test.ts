import { describe, expect, it } from 'vitest';
import { fillBuckets } from './dashboard';

const bucket = (start: string, traces: number) => ({
  start,
  traces,
  errors: 0,
  latency_p50: 1,
  latency_p95: 2,
  latency_p99: 3,
  input_tokens: 10,
  output_tokens: 5,
  cost: 0.5,
});

describe('fillBuckets', () => {
  it('puts the empty buckets the API leaves out back on the grid, over the whole window', () => {
    const points = fillBuckets({
      from: '2026-01-01T00:30:00.000Z',
      to: '2026-01-01T06:00:00.000Z',
      bucket_seconds: 3600,
      buckets: [bucket('2026-01-01T02:00:00.000Z', 4), bucket('2026-01-01T04:00:00.000Z', 2)],
    });
    expect(points.map((p) => [p.start.slice(11, 16), p.traces])).toEqual([
      ['00:00', 0],
      ['01:00', 0],
      ['02:00', 4],
      ['03:00', 0],
      ['04:00', 2],
      ['05:00', 0],
    ]);
    expect(points[1]).toMatchObject({ p50: null, tokens: 0, cost: 0 });
    expect(points[2]).toMatchObject({ p50: 1, tokens: 15, cost: 0.5 });
  });

  it('keeps the buckets as they are when one is off the grid', () => {
    const points = fillBuckets({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T03:00:00.000Z',
      bucket_seconds: 3600,
      buckets: [bucket('2026-01-01T00:00:00.000Z', 1), bucket('2026-01-01T01:30:00.000Z', 1)],
    });
    expect(points.map((p) => p.start)).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T01:30:00.000Z']);
  });
});
