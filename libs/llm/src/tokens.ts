import { getEncoding, type Tiktoken } from 'js-tiktoken';
import type { ChatMessage } from './request';

// Only for providers that report no usage: an estimate with OpenAI's public encodings.
const encoders = new Map<string, Tiktoken>();
function encoderFor(model: string): Tiktoken {
  const name = /gpt-4o|gpt-4\.1|gpt-5|o\d/.test(model) ? 'o200k_base' : 'cl100k_base';
  let enc = encoders.get(name);
  if (!enc) encoders.set(name, (enc = getEncoding(name)));
  return enc;
}

export function countTextTokens(model: string, text: string): number {
  // 'all': text that looks like a special token (<|endoftext|>) is counted, not refused.
  return text ? encoderFor(model).encode(text, 'all').length : 0;
}

/** Chat framing adds a few tokens per message (OpenAI's published rule of thumb: 3, plus 3 to prime the reply). */
export function countMessageTokens(model: string, messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + 3 + countTextTokens(model, m.content) + (m.name ? 1 : 0), 3);
}
