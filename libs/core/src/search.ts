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

/**
 * A search none of whose terms holds a word the index knows: it could only be answered by reading every
 * span, so it is refused (as the request's `search` field) rather than run.
 */
export class SearchError extends Error {
  constructor() {
    super(
      'the search needs at least one word of letters: numbers, ids, emails, URLs and punctuation are not indexed (filter on those instead)',
    );
    this.name = 'SearchError';
  }
}

// A word is a run of letters (with their combining marks) between characters that are neither letters
// nor digits: runs holding a digit (ids, hashes, numbers, base64) are not words. This keeps the index's
// vocabulary bounded, and finds every word PostgreSQL's sightline_words configuration finds (which
// search rechecks the candidates with).
const TOKEN_SEPARATOR = /[^\p{L}\p{M}\p{N}]+/u;
const NOT_A_WORD = /\p{N}/u;
/** Longer runs are not words anyone searches for. */
const MAX_WORD_LENGTH = 100;

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The distinct words of `text`, lower-cased: what the search index holds for a span. Computed in the
 * worker: PostgreSQL's text search parser cost about 0.15 ms of its CPU per 1.2 KB span, two thirds of
 * what storing the span cost it; this split costs a tenth of that.
 */
export function searchWords(text: string): string[] {
  const lower = text.toLowerCase();
  return NON_ASCII.test(lower) ? wordsOfAnyText(lower) : wordsOfAsciiText(lower);
}

/** The definition above, as regular expressions. */
function wordsOfAnyText(lower: string): string[] {
  const words = new Set<string>();
  for (const token of lower.split(TOKEN_SEPARATOR))
    if (token && token.length <= MAX_WORD_LENGTH && !NOT_A_WORD.test(token)) words.add(token);
  return [...words];
}

/**
 * The same words of ASCII text (most of what spans hold: JSON, English, code), where letters are a-z and
 * digits 0-9, in one pass over its characters. Most words repeat, so a word met before is found by a hash
 * of its characters and compared in place, without making its string: 20 µs instead of 40 for the
 * benchmark's 1.2 KB spans, where the regular expressions' split made a string of every run.
 */
function wordsOfAsciiText(lower: string): string[] {
  const words: string[] = [];
  // A word by the hash of its characters; rarely, words that share a hash.
  const byHash = new Map<number, string | string[]>();
  const end = lower.length;
  let start = 0,
    hash = 0,
    digits = false;
  for (let i = 0; i <= end; i++) {
    const c = i < end ? lower.charCodeAt(i) : 0;
    if (c >= 97 && c <= 122) {
      hash = (Math.imul(hash, 31) + c) | 0;
      continue;
    }
    if (c >= 48 && c <= 57) {
      digits = true;
      continue;
    }
    const length = i - start;
    if (length > 0 && length <= MAX_WORD_LENGTH && !digits) {
      // 30 bits: a small integer to V8, which a Map looks up without boxing it.
      const key = (hash ^ (length << 20)) & 0x3fffffff;
      const same = byHash.get(key);
      if (same === undefined || !holds(same, lower, start, length)) {
        const word = lower.slice(start, i);
        words.push(word);
        byHash.set(key, same === undefined ? word : typeof same === 'string' ? [same, word] : [...same, word]);
      }
    }
    start = i + 1;
    hash = 0;
    digits = false;
  }
  return words;
}

/** Whether `words` holds the word of `text` at `start`. */
function holds(words: string | string[], text: string, start: number, length: number): boolean {
  if (typeof words === 'string') return words.length === length && text.startsWith(words, start);
  for (const w of words) if (w.length === length && text.startsWith(w, start)) return true;
  return false;
}
