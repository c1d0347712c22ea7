import type { Logger } from 'pino';
import { costOf, countMessageTokens, countTextTokens } from '@sightline/llm';
import type { CompletionResponse, LlmRequest } from '@sightline/schemas';
import type { Outcome } from './provider-call';

/**
 * The caller's answer: tokens as the provider reported them, else counted with the model's tokenizer
 * (`usageEstimated`); the cost from the price table (a cache hit costs nothing). `priceKnown` is false for a
 * model the table lacks.
 */
export function priceAnswer(
  req: LlmRequest,
  traceId: string,
  o: Outcome,
  startedAt: Date,
  log: Logger,
): { response: CompletionResponse; priceKnown: boolean; usageEstimated: boolean } {
  const result = o.result;
  const content = result?.content ?? '';
  const inputTokens = result ? (result.input_tokens ?? countMessageTokens(req.model, req.messages)) : 0;
  const outputTokens = result ? (result.output_tokens ?? countTextTokens(req.model, content)) : 0;
  const price =
    result && !o.cacheHit
      ? costOf(req.provider, req.model, {
          input_tokens: inputTokens,
          output_tokens: outputTokens,
          cache_read_tokens: result.cache_read_tokens,
          cache_write_tokens: result.cache_write_tokens,
        })
      : { cost: 0, known: true };
  if (!price.known)
    log.warn({ provider: req.provider, model: req.model }, 'no known price for this model: cost logged as 0');
  return {
    priceKnown: price.known,
    usageEstimated: !!result && (result.input_tokens == null || result.output_tokens == null),
    response: {
      content,
      latency: o.latency,
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
      cost: price.cost,
      model: result?.model ?? req.model,
      provider: req.provider,
      cache_hit: o.cacheHit,
      status: o.error ? 'error' : 'success',
      start_timestamp: startedAt.toISOString(),
      end_timestamp: new Date().toISOString(),
      trace_id: traceId,
      inference_id: traceId,
      error: o.error,
    },
  };
}
