import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, readTrace } from '../support/app';
import { useStack } from '../support/fixtures';

// The sessions and users lists searched and narrowed to a time range, and one group's traces in that range.

const {
  stack,
  orgs: [{ key }, other],
} = useStack({ orgs: ['groups', 'groups-other'] });
let projectUuid: string;

// Every time is taken from this one clock, relative to the moment the test starts.
const NOW = Date.now();
const hoursAgo = (hours: number) => new Date(NOW - hours * 3_600_000).toISOString();

// Two sessions of ann (one two days old), one of ben today, and a session id full of LIKE's wildcards.
const TRACES = [
  { hours: 48, session: 'chat-old', user: 'Ann@example.com', status: 'success' },
  { hours: 2, session: 'chat-new', user: 'Ann@example.com', status: 'error' },
  { hours: 1, session: 'chat-new', user: 'Ann@example.com', status: 'success' },
  { hours: 3, session: 'support_50%', user: 'ben', status: 'success' },
];

beforeAll(async () => {
  const spans = TRACES.map((t, i) => ({
    trace_id: randomUUID(),
    project_name: 'groups',
    trace_name: `turn-${i}`,
    inputs: { message: `question ${i}` },
    output: t.status === 'error' ? null : `answer ${i}`,
    error: t.status === 'error' ? 'the model timed out' : null,
    start_timestamp: hoursAgo(t.hours),
    status: t.status,
    session_id: t.session,
    end_user_identifier: t.user,
  }));
  expect((await call(stack.app, key, 'POST', '/trace_logs/batch', { trace_logs: spans })).statusCode).toBe(200);
  expect((await readTrace(stack.app, key, spans.at(-1)!.trace_id)).statusCode).toBe(200);
  projectUuid = (await call(stack.app, key, 'POST', '/project', { name: 'groups' })).json().uuid;
});

const groups = async (body: Record<string, unknown>, k = key) => {
  const res = await call(stack.app, k, 'POST', '/trace-groups', { project_uuid: projectUuid, ...body });
  expect(res.statusCode).toBe(200);
  return res.json().results.map((g: { key: string; traces: number }) => [g.key, g.traces]);
};

describe('searching sessions and users', () => {
  it('finds groups by part of their key, in any case, taking wildcards literally', async () => {
    expect(await groups({ by: 'session', search: 'CHAT' })).toEqual([
      ['chat-new', 2],
      ['chat-old', 1],
    ]);
    expect(await groups({ by: 'session', search: '_50%' })).toEqual([['support_50%', 1]]);
    expect(await groups({ by: 'session', search: '%' })).toEqual([['support_50%', 1]]);
    expect(await groups({ by: 'user', search: 'ann@' })).toEqual([['Ann@example.com', 3]]);
    expect(await groups({ by: 'user', search: '  ' })).toHaveLength(2);
    expect(await groups({ by: 'user', search: 'nobody' })).toEqual([]);
  });

  it('counts only the traces in the time range, in the list and in a group', async () => {
    expect(await groups({ by: 'user', time_range: '24h' })).toEqual([
      ['Ann@example.com', 2],
      ['ben', 1],
    ]);
    expect(await groups({ by: 'session', time_range: '24h', search: 'chat' })).toEqual([['chat-new', 2]]);
    const group = async (time_range: string) =>
      (
        await call(stack.app, key, 'POST', '/trace-group', {
          project_uuid: projectUuid,
          by: 'user',
          key: 'Ann@example.com',
          time_range,
        })
      ).json();
    expect((await group('na')).traces.map((t: { session_id: string }) => t.session_id)).toEqual([
      'chat-old',
      'chat-new',
      'chat-new',
    ]);
    const today = await group('24h');
    expect(today.traces.map((t: { session_id: string }) => t.session_id)).toEqual(['chat-new', 'chat-new']);
    // A failed turn carries its error for the conversation to show.
    expect(today.traces[0]).toMatchObject({ status: 'error', error: 'the model timed out', output: null });
  });

  it("refuses a search too long, and never shows another organization's groups", async () => {
    const long = await call(stack.app, key, 'POST', '/trace-groups', {
      project_uuid: projectUuid,
      by: 'session',
      search: 'x'.repeat(201),
    });
    expect(long.statusCode).toBe(422);
    expect(long.json().detail[0].loc).toEqual(['body', 'search']);
    const elsewhere = await call(stack.app, other.key, 'POST', '/trace-groups', {
      project_uuid: projectUuid,
      by: 'session',
      search: 'chat',
    });
    expect(elsewhere.statusCode).toBe(404);
  });
});
