/**
 * Text as PostgreSQL can store it: it refuses NUL characters in text and jsonb, and lone UTF-16
 * surrogates (which JSON escapes and percent-decoding can both produce) in jsonb; those become U+FFFD.
 */
export const storableText = (s: string): string => s.replaceAll('\0', '').toWellFormed();

/** The text of a UUID, any case: the one pattern ids are checked against. */
export const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
