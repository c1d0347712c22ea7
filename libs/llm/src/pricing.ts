import { calcPrice } from '@pydantic/genai-prices';
import { pricingProviderId } from './providers/index';

/** USD cost from the maintained genai-prices tables; `known` is false when they have no price for the model. */
export function costOf(provider: string, model: string, inputTokens: number, outputTokens: number): { cost: number; known: boolean } {
  const price =
    calcPrice({ input_tokens: inputTokens, output_tokens: outputTokens }, model, { providerId: pricingProviderId(provider) }) ??
    calcPrice({ input_tokens: inputTokens, output_tokens: outputTokens }, model);
  return price ? { cost: price.total_price, known: true } : { cost: 0, known: false };
}
