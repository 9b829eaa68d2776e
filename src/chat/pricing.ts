import type { CatalogModel } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import { type Charge, type Discount, type PriceLine, priceCharge } from '../contracts/money.ts';

const price = (value: bigint | null, fallback: bigint | null): bigint => value ?? fallback ?? 0n;

/** The lines of a chat request's charge: uncached, cached and cache-written input apart, then output. */
export function chatLines(model: CatalogModel, usage: ReportedUsage): PriceLine[] {
  const input = model.prices.inputNanosPerMillion;
  const uncached = Math.max(0, usage.promptTokens - usage.cachedPromptTokens - usage.cacheWriteTokens);
  const lines: PriceLine[] = [
    { item: 'input_tokens', quantity: uncached, unitPriceNanosPerMillion: price(input, null) },
  ];
  if (usage.cachedPromptTokens > 0) {
    lines.push({
      item: 'cached_input_tokens',
      quantity: usage.cachedPromptTokens,
      unitPriceNanosPerMillion: price(model.prices.cachedInputNanosPerMillion, input),
    });
  }
  if (usage.cacheWriteTokens > 0) {
    lines.push({
      item: 'cache_write_tokens',
      quantity: usage.cacheWriteTokens,
      unitPriceNanosPerMillion: price(model.prices.cacheWriteNanosPerMillion, input),
    });
  }
  lines.push({
    item: 'output_tokens',
    quantity: usage.completionTokens,
    unitPriceNanosPerMillion: price(model.prices.outputNanosPerMillion, null),
  });
  return lines;
}

export function tokensOnly(promptTokens: number, completionTokens: number): ReportedUsage {
  return { promptTokens, completionTokens, cachedPromptTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

export function chatCharge(model: CatalogModel, usage: ReportedUsage, discount: Discount = 'none'): Charge {
  return priceCharge(chatLines(model, usage), discount);
}

/**
 * The most output tokens per choice whose worst-case charge, for `choices` choices, fits in `budgetNanos` (0 when
 * not even one does).
 */
export function affordableOutputTokens(
  model: CatalogModel,
  inputTokens: number,
  limit: number,
  budgetNanos: bigint,
  discount: Discount = 'none',
  choices = 1,
): number {
  let low = 0;
  let high = limit;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (chatCharge(model, tokensOnly(inputTokens, middle * choices), discount).chargedNanos <= budgetNanos)
      low = middle;
    else high = middle - 1;
  }
  return low;
}
