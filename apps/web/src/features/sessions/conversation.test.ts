import { describe, expect, it } from 'vitest';
import { sessionsOf } from './conversation';

const turn = (id: string, session: string | null) => ({
  trace_id: id,
  start_timestamp: null,
  inputs: null,
  output: null,
  session_id: session,
});

describe("a user's traces by session", () => {
  it('keeps each session whole, in the order sessions began, with traces without one last', () => {
    const traces = [turn('1', 'a'), turn('2', null), turn('3', 'b'), turn('4', 'a'), turn('5', 'b')];
    expect(sessionsOf(traces).map((s) => [s.sessionId, s.traces.map((t) => t.trace_id)])).toEqual([
      ['a', ['1', '4']],
      ['b', ['3', '5']],
      [null, ['2']],
    ]);
    expect(sessionsOf([])).toEqual([]);
  });
});
