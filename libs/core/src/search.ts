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
