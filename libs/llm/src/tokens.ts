import { createRequire } from 'node:module';
import type { countTokens as GptCount } from 'gpt-tokenizer/encoding/o200k_base';
import type { getTokenizer as ClaudeTokenizer } from '@anthropic-ai/tokenizer';
import type { ChatMessage } from './request';

// Counts with the model's own tokenizer: OpenAI's public encodings, and for Claude the one Anthropic publishes
// (@anthropic-ai/tokenizer). For providers that report no usage, for spans logged without it, and for limits
// and budgets that must weigh a call before it is made.
type Count = (text: string) => number;
/** What counting reads of a message. */
type CountedMessage = Pick<ChatMessage, 'content' | 'name'> & { role?: string };

// Text that looks like a special token (<|endoftext|>) is a provider's plain text: counted, never refused.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

// Each tokenizer's tables take about a second and tens of MB to load: loaded on first use, so that a process
// that never counts (the API) never pays for them.
const require = createRequire(import.meta.url);
const TOKENIZERS = {
  o200k: (): Count => {
    const count = (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: typeof GptCount }).countTokens;
    return (text) => count(text, AS_TEXT);
  },
  cl100k: (): Count => {
    const count = (require('gpt-tokenizer/encoding/cl100k_base') as { countTokens: typeof GptCount }).countTokens;
    return (text) => count(text, AS_TEXT);
  },
  claude: (): Count => {
    const tokenizer = (require('@anthropic-ai/tokenizer') as { getTokenizer: typeof ClaudeTokenizer }).getTokenizer();
    // As the package's own countTokens counts, with one tokenizer kept rather than one made (and its tables
    // parsed) for every text.
    return (text) => tokenizer.encode(text.normalize('NFKC'), 'all').length;
  },
};
const loaded = new Map<keyof typeof TOKENIZERS, Count>();
function tokenizer(name: keyof typeof TOKENIZERS): Count {
  let count = loaded.get(name);
  if (!count) loaded.set(name, (count = TOKENIZERS[name]()));
  return count;
}

const CLAUDE = /claude/i;
const O200K = /gpt-4o|gpt-4\.1|gpt-5|o\d/;
/** Models whose own tokenizer is known here: OpenAI's (GPT, the o-series) and Anthropic's Claude. */
const OWN_TOKENIZER = /(^|\/)(gpt-|chatgpt-|ft:gpt-|o\d(-|$))|claude/i;

/** Whether the model's own tokenizer counts its tokens here (else counting falls back on OpenAI's cl100k). */
export const hasOwnTokenizer = (model: string) => OWN_TOKENIZER.test(model);

const countFor = (model: string): Count =>
  tokenizer(CLAUDE.test(model) ? 'claude' : O200K.test(model) ? 'o200k' : 'cl100k');

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
    if (run.index > at) tokens += count(text.slice(at, run.index));
    for (let i = 0; i < run[0].length; i += RUN_CHARS) tokens += count(run[0].slice(i, i + RUN_CHARS));
    at = run.index + run[0].length;
  }
  if (at < text.length) tokens += count(text.slice(at));
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
export function countMessageTokens(model: string, messages: readonly CountedMessage[]): number {
  const framing = messages.reduce((n, m) => n + 3 + (m.name ? 1 : 0), 3);
  return (
    framing +
    countTexts(
      model,
      messages.map((m) => m.content),
    )
  );
}
