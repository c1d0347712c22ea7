import { describe, expect, it } from 'vitest';
import { costByModel, fillBuckets, OTHER_MODELS } from './dashboard';

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
    expect(points[1]).toMatchObject({ p50: null, tokens: 0, cost: 0, errorRate: null });
    expect(points[2]).toMatchObject({ p50: 1, tokens: 15, cost: 0.5, errorRate: 0 });
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

describe('the error rate', () => {
  it('is each bucket’s errors over its traces, and a gap where no trace ran', () => {
    const points = fillBuckets({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-01T03:00:00.000Z',
      bucket_seconds: 3600,
      buckets: [
        { ...bucket('2026-01-01T00:00:00.000Z', 4), errors: 1 },
        { ...bucket('2026-01-01T02:00:00.000Z', 5), errors: 5 },
      ],
    });
    expect(points.map((p) => p.errorRate)).toEqual([0.25, null, 1]);
  });
});

describe('costByModel', () => {
  const hour = (h: number) => `2026-01-01T0${h}:00:00.000Z`;
  const grid = [0, 1, 2].map((h) => ({ start: hour(h) }));

  it('puts each model’s cost on the grid, 0 where it made no call, costliest model first', () => {
    const { models, rows } = costByModel(
      {
        cost_by_model: [
          { model: 'big', calls: 2, cost: 3 },
          { model: 'small', calls: 5, cost: 0.5 },
        ],
        cost_by_model_buckets: [
          { start: hour(0), model: 'big', calls: 1, cost: 1 },
          { start: hour(0), model: 'small', calls: 5, cost: 0.5 },
          { start: hour(2), model: 'big', calls: 1, cost: 2 },
        ],
      },
      grid,
    );
    expect(models).toEqual(['big', 'small']);
    expect(rows).toEqual([
      { start: hour(0), big: 1, small: 0.5 },
      { start: hour(1), big: 0, small: 0 },
      { start: hour(2), big: 2, small: 0 },
    ]);
  });

  it('sums the models past the sixth costliest as one', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const { models, rows } = costByModel(
      {
        cost_by_model: names.map((model, i) => ({ model, calls: 1, cost: 10 - i })),
        cost_by_model_buckets: names.map((model, i) => ({ start: hour(1), model, calls: 1, cost: 10 - i })),
      },
      grid,
    );
    expect(models).toEqual(['a', 'b', 'c', 'd', 'e', 'f', OTHER_MODELS]);
    expect(rows[1]).toMatchObject({ a: 10, f: 5, [OTHER_MODELS]: 4 + 3 });
    expect(rows[0]).toMatchObject({ [OTHER_MODELS]: 0 });
  });
});
