import type { ConditionalPrice, ModelInfo, ModelPrice } from '@pydantic/genai-prices';
import { ceilDiv, dollarsPerMillion } from '../contracts/money.ts';
import type { CatalogPrices, TokenRates } from './types.ts';

type PriceValue = NonNullable<ModelPrice[string]>;

const FIELDS = {
  input_mtok: 'inputNanosPerMillion',
  output_mtok: 'outputNanosPerMillion',
  cache_read_mtok: 'cachedInputNanosPerMillion',
  cache_write_mtok: 'cacheWriteNanosPerMillion',
} as const satisfies Record<string, keyof CatalogPrices>;

const isField = (key: string): key is keyof typeof FIELDS => Object.hasOwn(FIELDS, key);

/**
 * Price-list keys priced in a unit other than tokens that an endpoint bills by, as `perUnitNanos` entries: the unit
 * and how many of it the price list's rate covers (Mistral OCR's `input_document_kpages` is dollars per 1,000 pages).
 */
const PER_UNIT: Readonly<Record<string, { unit: string; per: bigint }>> = {
  input_document_kpages: { unit: 'page', per: 1000n },
};

/**
 * Dollars (a float from the price list) to nano-dollars, through the decimal string: `toFixed(9)` never uses
 * exponent notation (String(1e-7) would be "1e-7"), and the price list's figures have at most 9 decimals except for
 * float artefacts such as 0.18000000000000002 (meant 0.18) and repeating fractions such as 1/12, which round to the
 * nearest nano-dollar.
 */
export function dollarsToNanos(dollars: number): { nanos: bigint; exact: boolean } {
  if (!Number.isFinite(dollars) || dollars < 0) throw new Error(`not a price in dollars: ${dollars}`);
  const fixed = dollars.toFixed(9);
  const trimmed = fixed.replace(/\.?0+$/, '');
  return { nanos: dollarsPerMillion(trimmed), exact: Number(fixed) === dollars };
}

export interface ResolvedPrices {
  prices: CatalogPrices;
  notes: string[];
}

/**
 * The catalog's rates for one model, from its price list entry as of `now`:
 * - dated rates: the one in effect at `now` (as genai-prices' own calculation picks it); a price list change
 *   scheduled later takes effect when the catalog is next built, at the gateway's next start;
 * - time-of-day rates (DeepSeek's peak windows, priced above the rest of the day): the highest rate of the day,
 *   because one figure cannot follow the clock and the gateway must not undercharge;
 * - tiered rates (a higher rate past a prompt size): the base rates, and one tier per start with every rate as it
 *   stands above that start, which a request whose prompt is larger is held and charged at (`ratesAt`).
 */
export function resolvePrices(model: ModelInfo, now: Date): ResolvedPrices {
  const notes: string[] = [];
  const candidates = candidateRates(model.prices, now, notes);
  const others = new Set<string>();
  const perUnit: Record<string, bigint> = {};
  for (const rates of candidates) {
    for (const [key, value] of Object.entries(rates)) {
      if (value === undefined || isField(key)) continue;
      const unit = PER_UNIT[key];
      if (!unit) {
        others.add(key);
        continue;
      }
      // Rounded up to the nano-dollar per unit: never below the provider's rate.
      const nanos = ceilDiv(baseRate(key, value, notes), unit.per);
      if (nanos > (perUnit[unit.unit] ?? -1n)) perUnit[unit.unit] = nanos;
    }
  }
  const starts = tierStarts(candidates);
  const prices: CatalogPrices = tokenRates(candidates, null, notes);
  if (starts.length > 0) {
    prices.tiers = starts.map((start) => ({
      aboveInputTokens: start,
      ...tokenRates(candidates, start, notes),
    }));
    for (const rates of candidates) noteTiers(rates, notes);
  }
  if (rateValues(prices).every((p) => p === null)) {
    const priced = others.size > 0 || Object.keys(perUnit).length > 0;
    notes.push(priced ? 'no per-token rates in the price list' : 'no price in the price list');
  }
  if (others.size) notes.push(`also priced, not in these figures: ${[...others].sort().join(', ')}`);
  if (Object.keys(perUnit).length > 0) {
    prices.perUnitNanos = perUnit;
    const units = Object.entries(PER_UNIT).filter(([key]) => candidates.some((rates) => key in rates));
    notes.push(`per-unit prices: ${units.map(([key, u]) => `${u.unit} = ${key} / ${u.per}`).join(', ')}`);
  }
  return { prices, notes: [...new Set(notes)] };
}

const rateValues = (rates: TokenRates) => [
  rates.inputNanosPerMillion,
  rates.outputNanosPerMillion,
  rates.cachedInputNanosPerMillion,
  rates.cacheWriteNanosPerMillion,
];

/** Where some per-token rate rises: the starts of every tier of every candidate, ascending. */
function tierStarts(candidates: ModelPrice[]): number[] {
  const starts = new Set<number>();
  for (const rates of candidates) {
    for (const [key, value] of Object.entries(rates)) {
      if (isField(key) && typeof value === 'object') for (const tier of value.tiers) starts.add(tier.start);
    }
  }
  return [...starts].sort((a, b) => a - b);
}

/**
 * The four rates for a prompt larger than `above` tokens (null: the base rates), each the highest of the
 * candidates: a key's tiers apply once the prompt is greater than their start, as genai-prices applies them.
 */
function tokenRates(candidates: ModelPrice[], above: number | null, notes: string[]): TokenRates {
  const rates: TokenRates = {
    inputNanosPerMillion: null,
    outputNanosPerMillion: null,
    cachedInputNanosPerMillion: null,
    cacheWriteNanosPerMillion: null,
  };
  for (const candidate of candidates) {
    for (const [key, value] of Object.entries(candidate)) {
      if (value === undefined || !isField(key)) continue;
      const nanos = exactNanos(key, rateAbove(value, above), notes);
      const field = FIELDS[key];
      const current = rates[field];
      if (current === null || nanos > current) rates[field] = nanos;
    }
  }
  return rates;
}

function rateAbove(value: PriceValue, above: number | null): number {
  if (typeof value === 'number') return value;
  let rate = value.base;
  if (above === null) return rate;
  for (const tier of [...value.tiers].sort((a, b) => a.start - b.start))
    if (above >= tier.start) rate = tier.price;
  return rate;
}

function noteTiers(rates: ModelPrice, notes: string[]): void {
  for (const [key, value] of Object.entries(rates)) {
    if (!isField(key) || typeof value !== 'object') continue;
    const higher = value.tiers.map((t) => `$${t.price} above ${t.start} input tokens`).join(', ');
    notes.push(`${key} is tiered: base rate $${value.base}; ${higher}, applied by the prompt's size`);
  }
}

function candidateRates(prices: ModelInfo['prices'], now: Date, notes: string[]): ModelPrice[] {
  if (!Array.isArray(prices)) return [prices];
  const list: ConditionalPrice[] = prices;
  const windows = list.filter((c) => c.constraint?.type === 'time_of_date');
  const dated = list.filter((c) => c.constraint?.type !== 'time_of_date');
  const started = (c: ConditionalPrice) => {
    const since = startDate(c);
    return since === undefined || new Date(since) <= now;
  };
  // Later entries supersede earlier ones (the list's own order), so the last date already passed wins.
  const inEffect = dated.findLast(started) ?? dated[0];
  const since = inEffect && startDate(inEffect);
  if (since) notes.push(`rate in effect since ${since}`);
  for (const c of dated) if (!started(c)) notes.push(`rates change on ${startDate(c)}`);
  if (windows.length) notes.push('time-of-day rates: the highest rate of the day is listed');
  return [...(inEffect ? [inEffect.prices] : []), ...windows.map((w) => w.prices)];
}

const startDate = (c: ConditionalPrice): string | undefined =>
  c.constraint?.type === 'start_date' ? c.constraint.start_date : undefined;

/** A per-unit rate's base: no per-unit price in the list is tiered today, so a tier there is noted, not applied. */
function baseRate(key: string, value: PriceValue, notes: string[]): bigint {
  if (typeof value === 'number') return exactNanos(key, value, notes);
  const higher = value.tiers.map((t) => `$${t.price} above ${t.start}`).join(', ');
  notes.push(`${key} is tiered: base rate $${value.base}; not applied: ${higher}`);
  return exactNanos(key, value.base, notes);
}

function exactNanos(key: string, dollars: number, notes: string[]): bigint {
  const { nanos, exact } = dollarsToNanos(dollars);
  if (!exact) notes.push(`${key} $${dollars} rounded to the nano-dollar`);
  return nanos;
}
