/**
 * A trace's total of a measure (cost, tokens) as SQL, for the root span aliased `root`: the root's own value
 * when the client set one there (it then already covers the trace), else the sum over the trace's spans,
 * read from the covering `spans_by_root`. The traces table, the dashboard, sessions and experiment
 * comparisons all count this way, so that their figures add up.
 */
export const traceTotal = (root: string, column: string) =>
  `coalesce(${root}.${column}, (select sum(c.${column}) from spans c where c.organization_id = ${root}.organization_id and c.root_trace_id = ${root}.trace_id and c.created))`;
