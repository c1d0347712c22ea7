import type { Redis } from 'ioredis';
import type { SpanEvent } from '@sightline/schemas';
import type { RedisKeys } from './keys';
import { clearPending, takeSequenceNumbers } from './pending';
import type { Producer } from './producer';

export type NewSpanEvent = Omit<SpanEvent, 'seq'>;

/** The one way span events enter the system, from the API or from a worker (completion logs). */
export function createSpanIntake(redis: Redis, producer: Producer<'span-write'>, keys: RedisKeys) {
  async function enqueue(events: SpanEvent[]): Promise<void> {
    try {
      await producer.add({ events });
    } catch (err) {
      await clearPending(redis, keys, events).catch(() => {});
      throw err;
    }
  }
  return {
    /** Numbers the events in acceptance order and marks them pending, so reads wait for them from now on. */
    async reserve(events: NewSpanEvent[]): Promise<SpanEvent[]> {
      const seqs = await takeSequenceNumbers(redis, keys, events);
      return events.map((e, i) => ({ ...e, seq: seqs[i] }));
    },
    enqueue,
    /** Durable once it resolves: Redis holds the job. */
    async accept(events: NewSpanEvent[]): Promise<void> {
      await enqueue(await this.reserve(events));
    },
  };
}
export type SpanIntake = ReturnType<typeof createSpanIntake>;
