import type { Fixture } from '../../test/api';
import { ROOT_ID, skeleton, span } from '../../test/fixtures';

// The review page's fixtures: leases and the traces of the items (queues and criteria: test/fixtures).

/** The second item's trace: one span. */
export const SECOND_TRACE_ID = 'b0000000-0000-4000-8000-000000000009';

export const leased = (over: Partial<Fixture<'lease'>> = {}): Fixture<'lease'> => ({
  item_id: 1,
  trace_id: ROOT_ID,
  lease_expires_at: '2026-03-02T09:10:00.000Z',
  ...over,
});

/** The second item's trace: one span, with its own name. */
export const secondSkeleton: Fixture<'skeleton'> = {
  root_trace_id: SECOND_TRACE_ID,
  spans: [
    {
      ...skeleton.spans[0]!,
      trace_id: SECOND_TRACE_ID,
      parent_trace_id: SECOND_TRACE_ID,
      trace_name: 'cancel-order',
    },
  ],
};

/** Each span as `GET /span/{id}` answers: the model call of the first trace holds a conversation. */
export const spanOf = (traceId: string): Fixture<'span'> =>
  traceId === SECOND_TRACE_ID
    ? span(traceId, {
        root_trace_id: SECOND_TRACE_ID,
        parent_trace_id: SECOND_TRACE_ID,
        trace_name: 'cancel-order',
        inputs: { question: 'How do I cancel an order?' },
        output: 'Open the order and press Cancel.',
      })
    : traceId === ROOT_ID
      ? span(traceId)
      : span(traceId, {
          configuration: {
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: 'How do refunds work?' }],
          },
        });
