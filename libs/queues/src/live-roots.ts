import type { Redis } from 'ioredis';
import { publishInOrder } from '@sightline/runtime';
import type { SpanEvent } from '@sightline/schemas';
import type { RedisKeys } from './keys';

/** A root span just committed, as the live tail hears of it. */
export type LiveRoot = { project_id: string; trace_id: string };

/**
 * Tells the API nodes which root spans a write has just committed, one message per organization. Pub/sub
 * keeps nothing: a browser that is not listening misses nothing it cannot read from the listing.
 */
export async function publishLiveRoots(redis: Redis, keys: RedisKeys, events: readonly SpanEvent[]): Promise<void> {
  const byOrg = new Map<string, LiveRoot[]>();
  for (const e of events) {
    if (e.kind !== 'create' || e.fields.root_trace_id !== e.trace_id || !e.fields.project_id) continue;
    const roots = byOrg.get(e.organization_id) ?? [];
    byOrg.set(e.organization_id, [...roots, { project_id: e.fields.project_id as string, trace_id: e.trace_id }]);
  }
  await Promise.all(
    [...byOrg].map(([org, roots]) => publishInOrder(redis, keys.seq, keys.liveRoots(org), JSON.stringify(roots))),
  );
}
