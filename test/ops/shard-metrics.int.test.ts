import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { call } from '../support/app';
import { useStack } from '../support/fixtures';
import { parseMetrics, sampleValue } from './prometheus';

// With the span writes spread over shards (SPAN_WRITE_SHARDS), /metrics shows the span-write queue as one
// (its depth the sum of the shards') and, beside it, each shard's depth: a shard behind the others is the
// master that holds it.

const SHARDS = 3;
const {
  stack,
  orgs: [org],
} = useStack({ worker: false, orgs: ['org'], env: { SPAN_WRITE_SHARDS: String(SHARDS) } });

describe('the span-write shards on /metrics', () => {
  it("report each shard's depth, summing to the queue's", async () => {
    // One span a request, one job a request in its span's shard: thirty spread over three shards.
    for (let i = 0; i < 30; i++) {
      const res = await call(stack.app, org.key, 'POST', '/trace_log', {
        trace_id: randomUUID(),
        project_name: 'shard-metrics',
        trace_name: 's',
      });
      expect(res.statusCode).toBe(200);
    }
    const samples = parseMetrics((await stack.app.inject({ url: '/metrics' })).body);
    const held = await Promise.all(
      stack.app.spanShards.all.map(async (shard) => {
        const queue = new Queue('span-write', { connection: stack.app.redis, prefix: shard.prefix });
        const waiting = await queue.getWaitingCount();
        await queue.close();
        return waiting;
      }),
    );
    const reported = held.map((_, shard) =>
      sampleValue(samples, 'sightline_queue_shard_depth', { queue: 'span-write', shard: String(shard) }),
    );
    expect(reported).toEqual(held);
    expect(held.every((n) => n > 0)).toBe(true);
    expect(sampleValue(samples, 'sightline_queue_depth', { queue: 'span-write' })).toBe(
      held.reduce((a, b) => a + b, 0),
    );
  });
});
