import type { CatalogPrices, TokenRates } from './types.ts';

/**
 * The rates a request is billed at, by the size of its prompt: the highest tier it is above, else the base rates.
 * Providers reprice the whole request once its prompt passes a tier's start (input, cache reads and writes and
 * output alike), and count the prompt with its cached part; genai-prices takes a tier when the count is greater
 * than its start, as this does.
 */
export function ratesAt(prices: CatalogPrices, promptTokens: number): TokenRates {
  const tier = prices.tiers?.findLast((t) => promptTokens > t.aboveInputTokens);
  return tier ?? prices;
}

type Rate = bigint | null;

/** Every per-token rate, base and tiers alike, through `change` (the batch rate, the cache-write rate). */
export function mapTokenRates(
  prices: CatalogPrices,
  change: (rates: TokenRates) => TokenRates,
): CatalogPrices {
  const { tiers, ...rest } = prices;
  const changed: CatalogPrices = { ...rest, ...tokenRates(change(tokenRates(prices))) };
  if (tiers)
    changed.tiers = tiers.map((t) => ({
      aboveInputTokens: t.aboveInputTokens,
      ...tokenRates(change(tokenRates(t))),
    }));
  return changed;
}

/** Each of the four rates through `change`. */
export const eachRate =
  (change: (rate: Rate) => Rate) =>
  (rates: TokenRates): TokenRates => ({
    inputNanosPerMillion: change(rates.inputNanosPerMillion),
    outputNanosPerMillion: change(rates.outputNanosPerMillion),
    cachedInputNanosPerMillion: change(rates.cachedInputNanosPerMillion),
    cacheWriteNanosPerMillion: change(rates.cacheWriteNanosPerMillion),
  });

const tokenRates = eachRate((rate) => rate);
