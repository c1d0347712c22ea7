// What the routes that answer with a file share: its name, and CSV's guard against spreadsheets' formulas.

/** RFC 6266: an ASCII stand-in for old clients, and the exact name, percent-encoded, for the others. */
export function attachment(filename: string) {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\/]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const FORMULA_START = /^[=+\-@\t\r]/;
/**
 * A CSV cell a spreadsheet would run as a formula (`=HYPERLINK(...)`, `+cmd|...`, `@SUM(...)`, or one of those
 * after a tab or carriage return) prefixed with `'`, OWASP's rule for CSV injection: a spreadsheet shows it as
 * text, and an import keeps the `'` as part of the value.
 */
export const escapeFormula = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);
