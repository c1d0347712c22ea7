/**
 * A trace's root as a test case of a dataset: its inputs by the dataset's columns, and its target (or,
 * without one, its output). A column the inputs lack makes it unfit (the API refuses cases whose columns
 * differ); inputs the dataset has no column for are left out, and named.
 */
export function caseFromTrace(
  span: { inputs?: unknown; output?: unknown; target?: unknown },
  columns: string[],
):
  | { ok: true; inputs: Record<string, unknown>; target: string | null; dropped: string[] }
  | { ok: false; missing: string[] } {
  const inputs =
    span.inputs && typeof span.inputs === 'object' && !Array.isArray(span.inputs)
      ? (span.inputs as Record<string, unknown>)
      : {};
  const missing = columns.filter((c) => !(c in inputs));
  if (missing.length) return { ok: false, missing };
  const answer = span.target ?? span.output;
  return {
    ok: true,
    inputs: Object.fromEntries(columns.map((c) => [c, inputs[c]])),
    target: answer == null ? null : typeof answer === 'string' ? answer : JSON.stringify(answer),
    dropped: Object.keys(inputs).filter((k) => !columns.includes(k)),
  };
}
