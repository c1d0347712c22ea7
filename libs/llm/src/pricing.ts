import { calcPrice } from '@pydantic/genai-prices';
import { pricingProviderId } from './providers/index';

export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
};

/** USD cost from the maintained genai-prices tables (cached prompt tokens at their own rates); `known` is false when they have no price for the model. */
export function costOf(provider: string, model: string, usage: Usage): { cost: number; known: boolean } {
  const price = calcPrice(usage, model, { providerId: pricingProviderId(provider) }) ?? calcPrice(usage, model);
  return price ? { cost: price.total_price, known: true } : { cost: 0, known: false };
}
