/**
 * A trace's start as SQL, for the root span aliased `root`: its start, or when it was first stored when the
 * client sent none (as a span reads back). The listing, the dashboard and the project figures all place a
 * trace at this time, so that they count the same traces.
 */
export const traceStart = (root: string) => `coalesce(${root}.start_ts, ${root}.created_at)`;

/**
 * SQL: the root `root` starts (traceStart) at or after the SQL expression `from`, written as two conditions
 * that indexes serve: spans_roots by start, spans_roots_unstarted by first-stored time.
 */
export const startsSince = (root: string, from: string) =>
  `(${root}.start_ts >= ${from} or (${root}.start_ts is null and ${root}.created_at >= ${from}))`;
