/** Names of client-library row fields that are never input columns. */
export const RESERVED_COLUMNS = new Set(['target', 'tags']);

/**
 * What is wrong with a test case's input keys against a dataset's columns, or null when nothing is:
 * with `exact`, every column must be present; keys outside the columns are always refused.
 */
export function columnMismatch(
  columns: readonly string[],
  inputs: Record<string, unknown>,
  exact: boolean,
): string | null {
  const expected = new Set(columns);
  const extra = Object.keys(inputs).filter((k) => !expected.has(k));
  const missing = exact ? columns.filter((k) => !Object.hasOwn(inputs, k)) : [];
  if (!extra.length && !missing.length) return null;
  const parts = [
    extra.length && `unknown column(s): ${extra.join(', ')}`,
    missing.length && `missing column(s): ${missing.join(', ')}`,
  ].filter(Boolean);
  return `inputs must have the dataset's columns (${columns.join(', ')}); ${parts.join('; ')}`;
}
