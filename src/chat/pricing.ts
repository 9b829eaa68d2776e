import { mapTokenRates, ratesAt } from '../catalog/tiers.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import {
  type Charge,
  type Discount,
  type PriceLine,
  priceCharge,
  unitsCoveredBy,
} from '../contracts/money.ts';

const price = (value: bigint | null, fallback: bigint | null): bigint => value ?? fallback ?? 0n;

/**
 * The lines of a chat request's charge: uncached, cached and cache-written input apart, then output, at the rates
 * of the tier its prompt falls in (the provider's prompt count for a charge, the worst-case count for a hold).
 */
export function chatLines(model: CatalogModel, usage: ReportedUsage): PriceLine[] {
  const rates = ratesAt(model.prices, usage.promptTokens);
  const input = rates.inputNanosPerMillion;
  const uncached = Math.max(0, usage.promptTokens - usage.cachedPromptTokens - usage.cacheWriteTokens);
  const lines: PriceLine[] = [
    { item: 'input_tokens', quantity: uncached, unitPriceNanosPerMillion: price(input, null) },
  ];
  if (usage.cachedPromptTokens > 0) {
    lines.push({
      item: 'cached_input_tokens',
      quantity: usage.cachedPromptTokens,
      unitPriceNanosPerMillion: price(rates.cachedInputNanosPerMillion, input),
    });
  }
  if (usage.cacheWriteTokens > 0) {
    lines.push({
      item: 'cache_write_tokens',
      quantity: usage.cacheWriteTokens,
      unitPriceNanosPerMillion: price(rates.cacheWriteNanosPerMillion, input),
    });
  }
  lines.push({
    item: 'output_tokens',
    quantity: usage.completionTokens,
    unitPriceNanosPerMillion: price(rates.outputNanosPerMillion, null),
  });
  return lines;
}

export function tokensOnly(promptTokens: number, completionTokens: number): ReportedUsage {
  return { promptTokens, completionTokens, cachedPromptTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

/**
 * The tokens a hold prices: the input once and, for each choice, its output limit plus a predicted output the
 * provider may reject (rejected prediction tokens are billed as output, on top of what is produced).
 */
export function heldUsage(
  inputTokens: number,
  outputPerChoice: number,
  choices = 1,
  predicted = 0,
): ReportedUsage {
  return tokensOnly(inputTokens, (outputPerChoice + predicted) * choices);
}

/**
 * The model as a hold prices a request that may write the provider's prompt cache: every input token at the
 * higher of the input and cache-write rates (Anthropic bills a 5-minute cache write at 1.25 times the input rate,
 * and may write all of a prompt up to its last breakpoint). The charge still prices what the provider reports.
 */
export function inputAtCacheWriteRate(model: CatalogModel): CatalogModel {
  const prices = mapTokenRates(model.prices, (rates) => {
    const input = rates.inputNanosPerMillion;
    const write = rates.cacheWriteNanosPerMillion;
    return {
      ...rates,
      inputNanosPerMillion: input !== null && write !== null && write > input ? write : input,
    };
  });
  return { ...model, prices };
}

export function chatCharge(model: CatalogModel, usage: ReportedUsage, discount: Discount = 'none'): Charge {
  return priceCharge(chatLines(model, usage), discount);
}

/**
 * The most output tokens per choice whose worst-case charge, for `choices` choices (and a prediction of
 * `predicted` tokens), fits in `budgetNanos` (0 when not even one does).
 */
export function affordableOutputTokens(
  model: CatalogModel,
  inputTokens: number,
  limit: number,
  budgetNanos: bigint,
  discount: Discount = 'none',
  choices = 1,
  predicted = 0,
): number {
  return unitsCoveredBy(
    (tokens) => chatCharge(model, heldUsage(inputTokens, tokens, choices, predicted), discount).chargedNanos,
    budgetNanos,
    limit,
  );
}
