import { costOf } from './pricing';
import { countMessageTokens, countTextTokens, hasOwnTokenizer } from './tokens';

/** An LLM span's usage counted from its text, and its cost at the tables' rates (null: the tables lack the model). */
export type UsageEstimate = { input_tokens: number; output_tokens: number; total_tokens: number; cost: number | null };

/**
 * The usage of an LLM span that arrived without any (an instrumentation that leaves it out, as OpenInference's
 * OpenAI one does for streamed calls): its messages and output counted with the model's own tokenizer, and
 * priced unless the span sent its cost. Null unless the span has a model with a known tokenizer, its input
 * messages and its output, and no token count at all: usage that was sent is never second-guessed.
 */
export function estimateSpanUsage(fields: Record<string, unknown>): UsageEstimate | null {
  if (fields.input_tokens != null || fields.output_tokens != null || fields.total_tokens != null) return null;
  const configuration = (fields.configuration ?? {}) as { model?: unknown; provider?: unknown; messages?: unknown };
  const { model, messages } = configuration;
  const output = fields.output;
  if (typeof model !== 'string' || !hasOwnTokenizer(model)) return null;
  if (!Array.isArray(messages) || !messages.length || typeof output !== 'string' || !output) return null;
  const input_tokens = countMessageTokens(model, messages.map(asCounted));
  const output_tokens = countTextTokens(model, output);
  const provider = typeof configuration.provider === 'string' ? configuration.provider : '';
  const priced = costOf(provider, model, { input_tokens, output_tokens });
  return {
    input_tokens,
    output_tokens,
    total_tokens: input_tokens + output_tokens,
    cost: typeof fields.cost === 'number' ? fields.cost : priced.known ? priced.cost : null,
  };
}

/** A logged message as the counter reads it: its text parts (or its JSON), its tool calls, and its name. */
function asCounted(message: unknown): { content: string; name?: string } {
  const m = (message && typeof message === 'object' ? message : { content: message }) as Record<string, unknown>;
  const parts = [textOf(m.content)];
  if (m.tool_calls != null) parts.push(JSON.stringify(m.tool_calls));
  return { content: parts.join('\n'), ...(typeof m.name === 'string' && m.name && { name: m.name }) };
}

function textOf(content: unknown): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  // Content parts (OpenAI's and Anthropic's): their text. An image is priced by its size, not by its bytes
  // as text (a base64 photo would count as 100,000 tokens): left out, so the estimate errs low.
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
  return JSON.stringify(content);
}
