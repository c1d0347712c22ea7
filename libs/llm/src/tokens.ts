import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import type { ChatMessage } from './request';

// Estimates with OpenAI's public encodings: for providers that report no usage, and for limits and budgets
// that must weigh a call before it is made.
type Count = typeof o200k;
const countFor = (model: string): Count => (/gpt-4o|gpt-4\.1|gpt-5|o\d/.test(model) ? o200k : cl100k);

// Text that looks like a special token (<|endoftext|>) is a provider's plain text: counted, never refused.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE's time grows with the square of a run of characters without a space (131,072 'a's take 6 s), so a
 * run longer than this is counted in slices of this length: a token of ordinary text is shorter, and a
 * slice's cut costs at most a token.
 */
const RUN_CHARS = 64;
const LONG_RUN = new RegExp(`\\S{${RUN_CHARS + 1},}`, 'g');

/** Past this many characters of a call, the rest is not tokenized but estimated at the counted part's rate. */
export const COUNTED_CHARS = 65_536;

function encodedLength(count: Count, text: string): number {
  let tokens = 0;
  let at = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    if (run.index > at) tokens += count(text.slice(at, run.index), AS_TEXT);
    for (let i = 0; i < run[0].length; i += RUN_CHARS) tokens += count(run[0].slice(i, i + RUN_CHARS), AS_TEXT);
    at = run.index + run[0].length;
  }
  if (at < text.length) tokens += count(text.slice(at), AS_TEXT);
  return tokens;
}

/**
 * Counts the tokens of several texts, spending at most COUNTED_CHARS of tokenizing on all of them together:
 * whatever lies past that is estimated at the tokens per character of what was counted, so a call of any
 * size costs a bounded few milliseconds to weigh.
 */
function countTexts(model: string, texts: readonly string[]): number {
  const count = countFor(model);
  let left = COUNTED_CHARS;
  let counted = 0;
  let tokens = 0;
  let uncounted = 0;
  for (const text of texts) {
    const head = text.length > left ? text.slice(0, left) : text;
    if (head) tokens += encodedLength(count, head);
    counted += head.length;
    left -= head.length;
    uncounted += text.length - head.length;
  }
  return uncounted ? tokens + Math.ceil((uncounted * tokens) / counted) : tokens;
}

export function countTextTokens(model: string, text: string): number {
  return countTexts(model, [text]);
}

/** Chat framing adds a few tokens per message (OpenAI's published rule of thumb: 3, plus 3 to prime the reply). */
export function countMessageTokens(model: string, messages: readonly ChatMessage[]): number {
  const framing = messages.reduce((n, m) => n + 3 + (m.name ? 1 : 0), 3);
  return (
    framing +
    countTexts(
      model,
      messages.map((m) => m.content),
    )
  );
}
