import { calcPrice } from '@pydantic/genai-prices';

export type Usage = {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
};

/**
 * USD cost from the maintained genai-prices tables (cached prompt tokens at their own rates); `known` is
 * false when they have no price for the model. The tables know providers by the names Sightline gives
 * them. This module loads the tables alone (no provider SDK), so the API can price spans it is sent.
 */
export function costOf(provider: string, model: string, usage: Usage): { cost: number; known: boolean } {
  const price = calcPrice(usage, model, { providerId: provider }) ?? calcPrice(usage, model);
  return price ? { cost: price.total_price, known: true } : { cost: 0, known: false };
}
