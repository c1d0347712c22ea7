import { describe, expect, it } from 'vitest';
import { requestIdsOf } from './register-worker';

const events = (...ids: (string | undefined)[]) => ({
  events: ids.map((request_id) => ({ kind: 'create', request_id })),
});

describe('requestIdsOf', () => {
  it("names a job's own request", () => {
    expect(requestIdsOf({ request_id: 'r1', reply_to: 'x' })).toEqual({ reqId: 'r1' });
  });

  it('names the distinct requests of a span-write job: one as reqId, several as reqIds', () => {
    expect(requestIdsOf(events('r1', 'r1', undefined))).toEqual({ reqId: 'r1' });
    expect(requestIdsOf(events('r1', 'r2', 'r1', 'r3'))).toEqual({ reqIds: ['r1', 'r2', 'r3'] });
  });

  it('names at most 20 requests on a line, with the count of all', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `r${i}`);
    expect(requestIdsOf(events(...ids))).toEqual({ reqIds: ids.slice(0, 20), reqIdCount: 1000 });
  });

  it('names none for jobs without request ids, or with data it cannot read', () => {
    for (const data of [{}, events(undefined), null, undefined, 'text', { events: 'nope' }])
      expect(requestIdsOf(data)).toEqual({});
  });
});
