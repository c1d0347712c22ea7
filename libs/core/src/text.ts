/**
 * Text as PostgreSQL can store it: it refuses NUL characters in text and jsonb, and lone UTF-16
 * surrogates (which JSON escapes and percent-decoding can both produce) in jsonb; those become U+FFFD.
 */
export const storableText = (s: string): string => s.replaceAll('\0', '').toWellFormed();
