/**
 * Text as PostgreSQL can store it: it refuses NUL characters in text and jsonb, and lone UTF-16
 * surrogates (which JSON escapes and percent-decoding can both produce) in jsonb; those become U+FFFD.
 */
export const storableText = (s: string): string =>
  !s.includes('\0') && s.isWellFormed() ? s : s.replaceAll('\0', '').toWellFormed();

/** The text of a UUID, any case: the one pattern ids are checked against. */
export const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

// JSON can carry NUL and lone surrogates as escapes; the costly reviver that cleans them runs only for
// text that holds such an escape.
const SUSPECT_ESCAPE = /\\u0000|\\u[dD][89a-fA-F]/;

function storableValue(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (Object.keys(obj).some((k) => k.includes('\0') || !k.isWellFormed())) {
      return Object.fromEntries(Object.entries(obj).map(([k, v]) => [storableText(k), v]));
    }
  }
  return value;
}

/** JSON.parse, with every string and key made storable (see storableText). Throws as JSON.parse does. */
export const parseStorableJson = (text: string): unknown =>
  text.includes('\\u') && SUSPECT_ESCAPE.test(text) ? JSON.parse(text, storableValue) : JSON.parse(text);

/** Deeper JSON than this is refused: serializing it again (for the queue, for jsonb) would overflow the stack. */
export const MAX_NESTING = 256;

/** True when brackets outside strings nest deeper than `limit`; one pass over the text, no parsing. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Nesting deeper than `limit` takes more than 2 × limit characters.
  if (text.length <= 2 * limit) return false;
  // Most JSON opens few brackets: counting them (indexOf is native) rules it out without the walk below.
  let opened = 0;
  for (const bracket of ['{', '[']) {
    for (let i = text.indexOf(bracket); i >= 0 && opened <= limit; i = text.indexOf(bracket, i + 1)) opened++;
  }
  if (opened <= limit) return false;
  let depth = 0,
    inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93 /* } ] */) depth--;
  }
  return false;
}

/**
 * The characters that make a CSV cell a formula to a spreadsheet when it starts with one (`=HYPERLINK(...)`,
 * `+cmd|...`, `@SUM(...)`, or one of those after a tab or carriage return). OWASP's rule for CSV injection: such a
 * cell gets a `'` in front, which a spreadsheet shows as text and an import keeps as part of the value. Node
 * applies it (escapeFormula) and so does PostgreSQL, for the trace export's records.
 */
export const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'] as const;

/** `value` with a `'` in front when it starts like a formula (FORMULA_STARTS). */
export const escapeFormula = (value: string) =>
  (FORMULA_STARTS as readonly string[]).includes(value.charAt(0)) ? `'${value}` : value;
