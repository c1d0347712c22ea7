import type { TraceGroup } from '../../api/types';

type Trace = TraceGroup['traces'][number];

/** A user's traces of one session (null: those without one), in the order they happened. */
export type SessionTurns = { sessionId: string | null; traces: Trace[] };

/**
 * A user's traces separated by session: each session once, where its first trace falls in time, with all
 * its traces (a session the user came back to after another stays whole); traces without a session last.
 */
export function sessionsOf(traces: readonly Trace[]): SessionTurns[] {
  const bySession = new Map<string | null, Trace[]>();
  for (const t of traces) {
    const id = t.session_id ?? null;
    const turns = bySession.get(id);
    if (turns) turns.push(t);
    else bySession.set(id, [t]);
  }
  const sessions = [...bySession].map(([sessionId, turns]) => ({ sessionId, traces: turns }));
  return [...sessions.filter((s) => s.sessionId !== null), ...sessions.filter((s) => s.sessionId === null)];
}
