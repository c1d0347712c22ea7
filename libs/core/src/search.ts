/**
 * A console search as typed: words and "quoted phrases" that a span must all contain (whole words, in
 * any case), and -words it must not.
 */
export type SearchTerms = { include: string[]; exclude: string[] };

export function parseSearch(text: string): SearchTerms {
  const terms: SearchTerms = { include: [], exclude: [] };
  for (const [, minus, phrase, word] of text.matchAll(/(-?)(?:"([^"]*)"|(\S+))/g)) {
    const term = (phrase ?? word).trim();
    if (term && term !== '-') (minus ? terms.exclude : terms.include).push(term);
  }
  return terms;
}

// A word is a run of letters (with their combining marks) between characters that are neither letters
// nor digits: runs holding a digit (ids, hashes, numbers, base64) are not words. This keeps the index's
// vocabulary bounded, and finds every word PostgreSQL's sightline_words configuration finds (which
// search rechecks the candidates with).
const TOKEN_SEPARATOR = /[^\p{L}\p{M}\p{N}]+/u;
const NOT_A_WORD = /\p{N}/u;
/** Longer runs are not words anyone searches for. */
const MAX_WORD_LENGTH = 100;

/**
 * The distinct words of `text`, lower-cased: what the search index holds for a span. Computed in the
 * worker: PostgreSQL's text search parser cost about 0.15 ms of its CPU per 1.2 KB span, two thirds of
 * what storing the span cost it; this split costs a tenth of that.
 */
export function searchWords(text: string): string[] {
  const words = new Set<string>();
  for (const token of text.toLowerCase().split(TOKEN_SEPARATOR))
    if (token && token.length <= MAX_WORD_LENGTH && !NOT_A_WORD.test(token)) words.add(token);
  return [...words];
}
